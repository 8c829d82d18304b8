// esbuild plugin that makes etcd3 bundleable: etcd3 loads its gRPC service definitions with
// @grpc/proto-loader's loadSync from .proto files beside its own sources, which a single-file
// weftd in /usr/local/bin would not have. At build time we parse those files with protobufjs and
// embed the resulting JSON descriptor; at run time proto-loader's fromJSON builds the same package
// definition from it (same options), so no file is read.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Plugin } from 'esbuild';

const require = createRequire(import.meta.url);

/** The JSON descriptor of etcd3's rpc.proto (with the kv.proto and auth.proto it imports). */
export function etcd3ProtoJson(): unknown {
  const protobuf = require('protobufjs') as typeof import('protobufjs');
  const protoDir = join(dirname(require.resolve('etcd3/package.json')), 'proto');
  const root = new protobuf.Root();
  root.resolvePath = (_origin: string, target: string) => join(protoDir, target.replace(/^.*[\\/]/, ''));
  root.loadSync('rpc.proto', { keepCase: true });
  return root.toJSON();
}

const LOAD_CALL = /\(0, proto_loader_1\.loadSync\)\(`\$\{__dirname\}\/\.\.\/proto\/rpc\.proto`, \{/;

/** Rewrites etcd3/lib/connection-pool.js to build its package definition from the embedded descriptor. */
export function etcd3ProtosPlugin(): Plugin {
  return {
    name: 'weft-etcd3-protos',
    setup(build) {
      build.onLoad({ filter: /etcd3[\\/]lib[\\/]connection-pool\.js$/ }, (args) => {
        const src = readFileSync(args.path, 'utf8');
        if (!LOAD_CALL.test(src)) throw new Error(`${args.path}: etcd3's proto loading changed; update scripts/build/etcd3-protos.ts`);
        const json = JSON.stringify(etcd3ProtoJson());
        return { contents: src.replace(LOAD_CALL, `(0, proto_loader_1.fromJSON)(${json}, {`), loader: 'js' };
      });
    },
  };
}

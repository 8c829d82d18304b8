// esbuild plugin: a module of a bundle that is compiled only when first used, yet still lives in
// the one file (no node_modules beside it). agent/lease/etcd-chunk.ts is replaced by a module holding
// the etcd store bundled separately (CommonJS, same options and plugins) as a string, evaluated with
// the bundle's own `require` on the first loadEtcdStore() call. A dynamic import alone is not enough:
// esbuild defers running such a module but V8 still parses its ~500 KB with the rest of the file,
// which is about 5 MB of weftd's idle RSS (docs/weftd.md, "Memory").
import { build, type Plugin } from 'esbuild';
import { join } from 'node:path';
import { BUNDLE_OPTIONS } from './esbuild-options.ts';

/** Replaces agent/lease/etcd-chunk.ts with the embedded, lazily compiled etcd store. */
export function lazyEtcdChunkPlugin(root: string, plugins: Plugin[]): Plugin {
  return {
    name: 'weft-lazy-etcd-chunk',
    setup(b) {
      b.onLoad({ filter: /agent[\\/]lease[\\/]etcd-chunk\.ts$/ }, async () => {
        const res = await build({ entryPoints: [join(root, 'agent', 'lease', 'etcd-store.ts')], ...BUNDLE_OPTIONS, outfile: 'etcd-store.cjs', plugins });
        const text = res.outputFiles[0]?.text;
        if (text === undefined) throw new Error('lazy-chunk: esbuild produced no etcd store bundle');
        const contents = [
          `const src = ${JSON.stringify(text)};`,
          'let loaded;',
          'export function loadEtcdStore() {',
          '  if (!loaded) { const m = { exports: {} }; new Function("module", "exports", "require", src)(m, m.exports, require); loaded = m.exports; }',
          '  return Promise.resolve(loaded);',
          '}',
        ].join('\n');
        return { contents, loader: 'js' };
      });
    },
  };
}

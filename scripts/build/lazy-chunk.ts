// esbuild plugin: modules of a bundle that are compiled only when first used, yet still live in the
// one file (no node_modules beside it). A chunk stub (agent/lease/etcd/chunk.ts, etcd/grpc-chunk.ts,
// kube/chunk.ts) is a module whose exported functions dynamically import a store or client; in a
// bundle it is replaced by one holding the stub bundled on its own (CommonJS, same options and
// plugins, the store inside), brotli-compressed and base64-encoded when large (COMPRESS_FROM), and
// evaluated with the bundle's own `require` on the first call. A dynamic import alone is not enough:
// esbuild defers running such a module but V8 still parses it with the rest of the file and keeps
// its text, and a plain string literal would sit in the heap twice (the script's source and the
// literal): compressed, the etcd store's 560 kB cost a file-store weftd about 300 kB (docs/weftd.md,
// "Memory").
import { build, type Plugin } from 'esbuild';
import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants } from 'node:zlib';
import { BUNDLE_OPTIONS } from './esbuild-options.ts';

/** Chunk stubs: chunk.ts or a name ending in -chunk.ts in a lease source's folder (agent/lease/<source>/). */
const STUB = /agent[\\/]lease[\\/][a-z]+[\\/](?:[a-z-]+-)?chunk\.ts$/;

/** The functions a stub exports (`export function name(` or `export async function name(`). */
export function stubExports(source: string): string[] {
  return [...source.matchAll(/^export (?:async )?function (\w+)\(/gm)].map((m) => m[1] as string);
}

/**
 * Chunks below this size are stored as plain text: decompressing costs a process node's zlib and
 * brotli code and buffers (about 1 MiB of RSS, measured on an etcd weftd), more than their text.
 */
export const COMPRESS_FROM = 64 * 1024;

/** The module text that replaces a stub: the chunk (compressed when large) and one forwarding function per export. */
export function formatChunkModule(chunk: string, exports: string[]): string {
  const compress = chunk.length >= COMPRESS_FROM;
  const z = compress ? brotliCompressSync(Buffer.from(chunk), { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: chunk.length } }).toString('base64') : chunk;
  return [
    // Inside a function: V8 makes a heap string of a literal only when the function is compiled, so a
    // weftd that never loads the chunk keeps just the file's text of it.
    `function payload() { return ${JSON.stringify(z)}; }`,
    'let loaded;',
    'function chunk() {',
    '  if (!loaded) {',
    compress ? '    const src = require("node:zlib").brotliDecompressSync(Buffer.from(payload(), "base64")).toString();' : '    const src = payload();',
    '    const m = { exports: {} };',
    '    new Function("module", "exports", "require", src)(m, m.exports, require);',
    '    loaded = m.exports;',
    '  }',
    '  return loaded;',
    '}',
    ...exports.map((name) => `export function ${name}(...args) { return chunk().${name}(...args); }`),
  ].join('\n');
}

/** Replaces every agent/lease/<source>/*chunk.ts with its embedded, lazily compiled chunk. */
export function lazyChunkPlugin(plugins: Plugin[]): Plugin {
  return {
    name: 'weft-lazy-chunk',
    setup(b) {
      b.onLoad({ filter: STUB }, async (args) => {
        const exports = stubExports(readFileSync(args.path, 'utf8'));
        if (exports.length === 0) throw new Error(`lazy-chunk: ${args.path} exports no function`);
        const res = await build({ entryPoints: [args.path], ...BUNDLE_OPTIONS, outfile: 'chunk.cjs', plugins });
        const text = res.outputFiles[0]?.text;
        if (text === undefined) throw new Error(`lazy-chunk: esbuild produced no bundle for ${args.path}`);
        return { contents: formatChunkModule(text, exports), loader: 'js' };
      });
    },
  };
}

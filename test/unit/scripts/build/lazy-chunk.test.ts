// The lazy chunk module (scripts/build/lazy-chunk.ts): a stub's exported functions, and the module
// that replaces it in a bundle, which decompresses and runs the chunk once and forwards every call.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { transformSync } from 'esbuild';
import { COMPRESS_FROM, formatChunkModule, stubExports } from '../../../../scripts/build/lazy-chunk.ts';

const require = createRequire(import.meta.url);

/** Evaluates ESM module text as CommonJS (as the bundle's esbuild pass would) and returns its exports. */
function evalModule(text: string): Record<string, (...a: unknown[]) => unknown> {
  const cjs = transformSync(text, { format: 'cjs', loader: 'js' }).code;
  const m = { exports: {} as Record<string, (...a: unknown[]) => unknown> };
  new Function('module', 'exports', 'require', cjs)(m, m.exports, require);
  return m.exports;
}

void describe('lazy chunk', () => {
  void it('finds the functions a stub exports', () => {
    const src = 'import x from "y";\nexport function loadA(): number {\n  return 1;\n}\nexport async function loadB(k: string) {}\nfunction hidden() {}\nexport const c = 1;\n';
    assert.deepEqual(stubExports(src), ['loadA', 'loadB']);
  });

  void it('runs the compressed chunk once, on the first call, and forwards arguments and results', () => {
    const g = globalThis as { weftChunkRuns?: number };
    g.weftChunkRuns = 0;
    const chunk = `globalThis.weftChunkRuns++; const big = ${JSON.stringify('x'.repeat(100_000))};\nmodule.exports = { loadA: (a, b) => a + b + big.length, loadB: () => Promise.resolve(require("node:path").sep) };`;
    const text = formatChunkModule(chunk, ['loadA', 'loadB']);
    assert.ok(text.length < 20_000, `the chunk is stored compressed (${text.length} chars for ${chunk.length})`);
    const m = evalModule(text);
    assert.equal(g.weftChunkRuns, 0, 'not run before the first call');
    assert.equal(m['loadA']?.(1, 2), 100_003);
    assert.equal(m['loadA']?.(2, 2), 100_004);
    assert.equal(g.weftChunkRuns, 1);
    return (m['loadB']?.() as Promise<string>).then((sep) => assert.equal(sep, '/'));
  });

  void it('stores a chunk below COMPRESS_FROM as plain text (no zlib in the process), still run once on the first call', () => {
    const g = globalThis as { weftSmallRuns?: number };
    g.weftSmallRuns = 0;
    const chunk = 'globalThis.weftSmallRuns++; module.exports = { loadA: (a) => a * 2 };';
    assert.ok(chunk.length < COMPRESS_FROM);
    const text = formatChunkModule(chunk, ['loadA']);
    assert.ok(text.includes(JSON.stringify(chunk)), 'the chunk text is in the module as it is');
    assert.ok(!text.includes('zlib'), 'nothing decompresses it');
    const m = evalModule(text);
    assert.equal(g.weftSmallRuns, 0, 'not run before the first call');
    assert.equal(m['loadA']?.(21), 42);
    assert.equal(m['loadA']?.(1), 2);
    assert.equal(g.weftSmallRuns, 1);
  });
});

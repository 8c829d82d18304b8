// The one-way rule of docs/architecture.md, checked on every source file: lib/ imports none of
// plugins/, ipam/, agent/, cli/; plugins and the agent never import each other; shipped code never
// imports tests or the test kit; scripts/ and the test kit never import test/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/** Top-level folders a file in `layer` must not import from. */
const FORBIDDEN: Record<string, readonly string[]> = {
  lib: ['plugins', 'ipam', 'agent', 'cli', 'scripts', 'testkit', 'test'],
  ipam: ['plugins', 'agent', 'cli', 'scripts', 'testkit', 'test'],
  plugins: ['agent', 'cli', 'scripts', 'testkit', 'test'],
  agent: ['plugins', 'ipam', 'cli', 'scripts', 'testkit', 'test'],
  cli: ['plugins', 'ipam', 'agent', 'testkit', 'test'],
  scripts: ['test'],
  testkit: ['test'],
};

const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** Violations in one file's text: "<file> -> <target>" for each relative import into a forbidden folder. */
export function layerViolations(file: string, text: string): string[] {
  const layer = file.split('/')[0] ?? '';
  const banned = FORBIDDEN[layer] ?? [];
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? '';
    const target = normalize(join(dirname(file), spec));
    if (banned.includes(target.split('/')[0] ?? '')) out.push(`${file} -> ${target}`);
  }
  return out;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'build' && e.name !== 'node_modules') out.push(...sourceFiles(p));
    } else if (e.name.endsWith('.ts')) {
      out.push(p);
    }
  }
  return out;
}

test('the checker catches an upward import, a sideways one, and a dynamic one', () => {
  assert.deepEqual(layerViolations('lib/ip/x.ts', "import { a } from '../../agent/weftd.ts';"), ['lib/ip/x.ts -> agent/weftd.ts']);
  assert.deepEqual(layerViolations('plugins/b/x.ts', "export { a } from '../../agent/ip-masq.ts';"), ['plugins/b/x.ts -> agent/ip-masq.ts']);
  assert.deepEqual(layerViolations('agent/x.ts', "const m = await import('../plugins/bridge/plugin.ts');"), ['agent/x.ts -> plugins/bridge/plugin.ts']);
  assert.deepEqual(layerViolations('plugins/b/main.ts', "import { h } from '../../ipam/host-local/plugin.ts';"), []);
});

test('no source file imports against the one-way rule', () => {
  const violations = Object.keys(FORBIDDEN).flatMap((layer) =>
    sourceFiles(layer).flatMap((f) => layerViolations(relative(ROOT, join(ROOT, f)), readFileSync(join(ROOT, f), 'utf8'))),
  );
  assert.deepEqual(violations, []);
});

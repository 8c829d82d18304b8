// The one-way rule of docs/architecture.md, checked on every source file of every folder: which
// top-level room may import which (MAY_IMPORT, the whole rule in one table), and the one door a room
// must use into another (THROUGH: cli/ reaches agent/ only through agent/inspect.ts). A new top-level
// folder fails here until it is given its line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * Every top-level room and the rooms its files may import from (a room always imports itself).
 * Shipped code (lib, plugins, ipam, agent, cli) never imports scripts/, testkit/ or test/; `gen` is
 * the validators scripts/gen-validators.ts generates (shipped inside the plugins' bundles). `.` is
 * the files at the root (eslint.config.js).
 */
export const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  lib: [],
  ipam: ['lib', 'gen'],
  plugins: ['lib', 'ipam', 'gen'],
  agent: ['lib'],
  cli: ['lib', 'agent'],
  testkit: ['lib', 'plugins', 'ipam', 'agent', 'cli', 'gen'],
  scripts: ['lib', 'plugins', 'ipam', 'agent', 'cli', 'testkit', 'gen'],
  test: ['lib', 'plugins', 'ipam', 'agent', 'cli', 'testkit', 'scripts', 'gen'],
  '.': [],
};

/** room -> room it enters -> the only file of it that room may import. */
export const THROUGH: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  cli: { agent: 'agent/inspect.ts' },
};

/** Top-level folders that hold no source of ours: documents and configuration, or made by tools (gitignored). */
const NOT_SOURCE = new Set(['.ci', 'conf', 'deploy', 'docs', '.git', 'node_modules', 'dist', 'gen', 'bench-results']);

const SOURCE = /\.(?:[cm]?ts|[cm]?js)$/;
const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|(?:^|\n)\s*import\s*['"](\.{1,2}\/[^'"]+)['"]|\b(?:import|require)\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** The room of a repository-relative path: its first folder, or `.` for a file at the root. */
function roomOf(path: string): string {
  const parts = path.split('/');
  return parts.length > 1 ? (parts[0] ?? '.') : '.';
}

/** Violations in one file's text: "<file> -> <target>" for each relative import against MAY_IMPORT or THROUGH. */
export function layerViolations(file: string, text: string): string[] {
  const room = roomOf(file);
  const allowed = MAY_IMPORT[room];
  if (allowed === undefined) return [`${file}: room ${room}/ is not in MAY_IMPORT`];
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3] ?? '';
    const target = normalize(join(dirname(file), spec));
    const to = roomOf(target);
    if (to === room) continue;
    const door = THROUGH[room]?.[to];
    if (!allowed.includes(to) || (door !== undefined && target !== door)) out.push(`${file} -> ${target}`);
  }
  return out;
}

/** Every source file below `dir` (repository-relative), no folder skipped but node_modules. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const p = dir === '' ? e.name : join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && !(dir === '' && NOT_SOURCE.has(e.name))) out.push(...sourceFiles(p));
    } else if (SOURCE.test(e.name)) {
      out.push(p);
    }
  }
  return out;
}

test('the checker catches an upward import, a sideways one, a dynamic one, a bare one, and a way around a door', () => {
  assert.deepEqual(layerViolations('lib/ip/x.ts', "import { a } from '../../agent/weftd.ts';"), ['lib/ip/x.ts -> agent/weftd.ts']);
  assert.deepEqual(layerViolations('plugins/b/x.ts', "export { a } from '../../agent/ip-masq.ts';"), ['plugins/b/x.ts -> agent/ip-masq.ts']);
  assert.deepEqual(layerViolations('agent/x.ts', "const m = await import('../plugins/bridge/plugin.ts');"), ['agent/x.ts -> plugins/bridge/plugin.ts']);
  assert.deepEqual(layerViolations('cli/install/x.ts', "import '../../scripts/build/entries.ts';"), ['cli/install/x.ts -> scripts/build/entries.ts']);
  assert.deepEqual(layerViolations('testkit/x.ts', "import type { E } from '../scripts/build/entries.ts';"), ['testkit/x.ts -> scripts/build/entries.ts']);
  assert.deepEqual(layerViolations('cli/doctor/x.ts', "import { a } from '../../agent/flags.ts';"), ['cli/doctor/x.ts -> agent/flags.ts']);
  assert.deepEqual(layerViolations('cli/doctor/x.ts', "import { a } from '../../agent/inspect.ts';"), []);
  assert.deepEqual(layerViolations('plugins/b/main.ts', "import { h } from '../../ipam/host-local/plugin.ts';"), []);
  assert.deepEqual(layerViolations('scripts/bench/x.ts', "import { c } from '../../cli/entries.ts';"), []);
  assert.deepEqual(layerViolations('newroom/x.ts', ''), ['newroom/x.ts: room newroom/ is not in MAY_IMPORT']);
});

test('every top-level folder is a room of MAY_IMPORT or holds no source', () => {
  const folders = readdirSync(ROOT, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  assert.deepEqual(folders.filter((f) => MAY_IMPORT[f] === undefined && !NOT_SOURCE.has(f)), []);
});

test('no source file imports against the one-way rule', () => {
  const files = sourceFiles('');
  assert.ok(files.some((f) => f.split('/').includes('build')), 'folders named build are read too');
  const violations = files.flatMap((f) => layerViolations(f, readFileSync(join(ROOT, f), 'utf8')));
  assert.deepEqual(violations, []);
});

// The standalone bin dir (dist/sea/weft under every executable's name, as `weft install --standalone`
// lays it out) and a wrapper that runs a command where no Node.js can run: a new mount namespace
// with every node binary on the usual paths hidden under an empty, non-executable file.
import { copyFileSync, existsSync, linkSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENTRIES } from '../cli/entries.ts';
import { inPrivateMounts } from './netns.ts';

export const ROOT = join(import.meta.dirname, '..');
export const SEA_WEFT = join(ROOT, 'dist', 'sea', 'weft');
/** The PATH every wrapped command gets: system dirs only. */
export const CLEAN_PATH = '/usr/sbin:/usr/bin:/sbin:/bin';

/** Why the standalone tests cannot run here, or false. */
export function standaloneSkipReason(): string | false {
  if (process.getuid?.() !== 0) return 'needs root (mount and network namespaces)';
  if (!existsSync(SEA_WEFT)) return 'dist/sea/weft missing: run npm run build';
  return false;
}

/**
 * A temp dir (or `into`, an existing empty dir such as a runtime's CNI bin dir) holding dist/sea/weft
 * as `weft` and a hard link to it per entry name (plugins, weftd); remove() deletes the dir.
 */
export function standaloneBinDir(into?: string): { dir: string; remove: () => void } {
  const dir = into ?? mkdtempSync(join(tmpdir(), 'weft-sa-bin-'));
  const exe = join(dir, 'weft');
  try {
    linkSync(SEA_WEFT, exe); // a rebuild renames a new file over dist/sea/weft: this inode stays whole
  } catch {
    copyFileSync(SEA_WEFT, exe);
  }
  for (const e of ENTRIES) if (e.name !== 'weft') linkSync(exe, join(dir, e.name));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Every node binary reachable through the usual PATH dirs and the test's own PATH, resolved. */
export function nodeBinaries(): string[] {
  const dirs = [...(process.env['PATH'] ?? '').split(':'), ...CLEAN_PATH.split(':'), '/usr/local/bin', '/usr/local/sbin'];
  const found = new Set<string>([realpathSync(process.execPath)]);
  for (const d of dirs) {
    const p = join(d, 'node');
    if (d !== '' && existsSync(p)) found.add(realpathSync(p));
  }
  return [...found];
}

/**
 * Writes `<dir>/no-node` and returns its argv prefix: `no-node cmd args...` runs cmd in a new mount
 * namespace (slave: mounts made by the host later still show, ours never leak out) where each node
 * binary is bind-mounted over by an empty file of mode 0644, with PATH set to CLEAN_PATH.
 */
export function noNodeWrapper(dir: string): string[] {
  const empty = join(dir, 'empty');
  writeFileSync(empty, '', { mode: 0o644 });
  const wrap = inPrivateMounts(nodeBinaries().map((n) => [empty, n] as const), [], 'slave');
  const quote = (arg: string): string => `'${arg.replace(/'/g, `'"'"'`)}'`;
  const script = join(dir, 'no-node');
  writeFileSync(script, [
    '#!/bin/sh',
    '# Runs "$@" where no Node.js can run (see testkit/standalone.ts).',
    `export PATH=${CLEAN_PATH}`,
    `exec ${wrap.map(quote).join(' ')} "$@"`,
    '',
  ].join('\n'), { mode: 0o755 });
  return [script];
}

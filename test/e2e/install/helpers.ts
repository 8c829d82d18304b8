// Helpers for the installer tests: a temp "machine root" whose dirs stand in for /opt/cni/bin,
// /etc/cni/net.d, ..., a content+mode hash of a whole tree, and running the built `weft` CLI.
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { run } from '../../../testkit/exec.ts';

export const ROOT = join(import.meta.dirname, '..', '..', '..');
export const DIST_BIN = join(ROOT, 'dist', 'bin');
export const WEFT = join(DIST_BIN, 'weft');
/** The standalone executable (a Node single executable application holding every entry). */
export const SEA_WEFT = join(ROOT, 'dist', 'sea', 'weft');

/** Every entry under `dir` as relative path -> "type mode sha256|target"; the directory itself included. */
export function hashTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (p: string): void => {
    const st = lstatSync(p);
    const mode = (st.mode & 0o7777).toString(8);
    const rel = relative(dir, p) || '.';
    if (st.isDirectory()) {
      out.set(rel, `dir ${mode}`);
      for (const name of readdirSync(p).sort()) walk(join(p, name));
    } else if (st.isSymbolicLink()) {
      out.set(rel, `link ${readlinkSync(p)}`);
    } else {
      out.set(rel, `file ${mode} ${createHash('sha256').update(readFileSync(p)).digest('hex')}`);
    }
  };
  walk(dir);
  return out;
}

/** The installer's directory flags for a temp machine root `t`. */
export function dirFlags(t: string): string[] {
  return [
    '--bin-dir', join(t, 'opt/cni/bin'),
    '--conf-dir', join(t, 'etc/cni/net.d'),
    '--unit-dir', join(t, 'etc/systemd/system'),
    '--agent-dir', join(t, 'usr/local/bin'),
    '--weft-conf-dir', join(t, 'etc/weft'),
    '--state-dir', join(t, 'var/lib/weft/install'),
  ];
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion (no shell); never rejects on a non-zero exit. */
export function runCmd(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<CliRun> {
  return run(argv, { env });
}

/** Runs the built `weft` CLI. */
export function weft(args: string[]): Promise<CliRun> {
  return runCmd([WEFT, ...args]);
}

/** Asserts-friendly diff of two hash trees: entries added, removed or changed. */
export function diffTrees(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of before) if (after.get(k) !== v) out.push(after.has(k) ? `changed ${k}: ${v} -> ${after.get(k) ?? ''}` : `removed ${k}`);
  for (const k of after.keys()) if (!before.has(k)) out.push(`added ${k}`);
  return out;
}

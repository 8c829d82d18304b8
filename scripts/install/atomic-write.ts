// Atomic file replacement: write a temp file in the destination's directory, fsync it, rename it
// over the destination, fsync the directory. rename(2) within one filesystem swaps the directory
// entry in one step, so a runtime exec'ing the path sees the old or the new file, never a partial
// one; and we never open a running executable for writing (that would fail with ETXTBSY).
import { linkSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fsyncDir, writeFileAtomicSync } from '../../lib/fs/atomic-write.ts';

export { fsyncDir };

/** Replaces `dest` with `data` (mode `mode`) atomically; creates nothing but the file itself. */
export function atomicWriteFile(dest: string, data: Uint8Array | string, mode: number): void {
  // Hidden temp name: runtimes list CNI dirs, and a stray temp file must never look like a plugin or
  // conflist. exactMode: open() applies the umask, and the manifest promises exactly `mode`.
  writeFileAtomicSync(dest, data, { mode, exactMode: true, hidden: true, tempTag: 'weft-tmp', fsyncDir: true });
}

/**
 * Makes `dest` a hard link to `target` atomically: the link is made under a hidden temp name in the
 * same directory and renamed over `dest`, so a runtime exec'ing `dest` finds the old file or the
 * new one, never none. Both must be on one filesystem (EXDEV otherwise).
 */
export function atomicLink(target: string, dest: string): void {
  const tmp = join(dirname(dest), `.${basename(dest)}.weft-tmp-${process.pid}-${Date.now().toString(36)}`);
  linkSync(target, tmp);
  try {
    renameSync(tmp, dest);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  fsyncDir(dirname(dest));
}

/** Creates `dir` and its missing parents; returns the directories it created, outermost first. */
export function ensureDirs(dir: string, mode = 0o755): string[] {
  const missing: string[] = [];
  for (let d = dir; !exists(d); d = dirname(d)) {
    missing.unshift(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing) mkdirSync(d, { mode });
  return missing;
}

function exists(p: string): boolean {
  try {
    statSync(p);
    return true;
  } catch {
    return false;
  }
}

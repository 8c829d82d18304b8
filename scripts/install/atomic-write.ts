// Atomic file replacement: write a temp file in the destination's directory, fsync it, rename it
// over the destination, fsync the directory. rename(2) within one filesystem swaps the directory
// entry in one step, so a runtime exec'ing the path sees the old or the new file, never a partial
// one; and we never open a running executable for writing (that would fail with ETXTBSY).
import { randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Replaces `dest` with `data` (mode `mode`) atomically; creates nothing but the file itself. */
export function atomicWriteFile(dest: string, data: Uint8Array | string, mode: number): void {
  const dir = dirname(dest);
  // Leading dot and a pid: runtimes list CNI dirs, and a stray temp file must never look like a plugin or conflist.
  const tmp = join(dir, `.${basename(dest)}.weft-tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  const fd = openSync(tmp, 'wx', mode);
  try {
    try {
      let off = 0;
      while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
      fchmodSync(fd, mode); // open() applied the umask; the manifest promises exactly `mode`.
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, dest);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  fsyncDir(dir);
}

/** fsyncs a directory so a rename or unlink in it survives a crash. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
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

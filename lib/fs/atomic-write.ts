// Atomic file replacement, shared by the addon loader, the code cache, subnet.env, the VTEP spec,
// flannel's stored delegate configs, host-local's holder index, the file lease store and the installer: write a uniquely named temp file in the destination's directory, fsync
// it, rename(2) it over the destination. rename within one filesystem swaps the directory entry in
// one step, so a reader (or a runtime exec'ing the path) sees the old file or the new one, never half.
// Imports only node:fs and node:path: this runs in every plugin bundle's start-up (lib/sys/loader.ts),
// where node:crypto would cost 4-20 ms, so temp names are pid + time + counter instead of random bytes.
import { closeSync, constants, fchmodSync, fsyncSync, linkSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isSysError } from '../errno/errno.ts';

/** How a file is written; every field optional (see the defaults on each). */
export interface AtomicWriteOptions {
  /** Mode the temp file is created with (the umask applies unless `exactMode`). Default 0o644. */
  mode?: number;
  /** fchmod the temp file to exactly `mode` before the rename (the umask is not applied). Default false. */
  exactMode?: boolean;
  /** fsync the file before the rename, so a crash never leaves a renamed but empty file. Default true. */
  fsync?: boolean;
  /** fsync the directory after the rename, so the rename itself survives a crash. Default false. */
  fsyncDir?: boolean;
  /** Temp name starts with a dot (directories that others list, e.g. CNI bin and conf dirs). Default false. */
  hidden?: boolean;
  /** Word between the destination's name and the pid in the temp name. Default 'tmp'. */
  tempTag?: string;
  /**
   * Unlink the destination before the rename. Readers may then briefly find no file, so only for
   * caches whose absence is harmless: renaming over an existing file makes ext4 (auto_da_alloc)
   * start writeback of the new data, a millisecond or more on a plugin's ADD path. Default false.
   */
  unlinkFirst?: boolean;
}

let tmpSeq = 0;

/** Largest single write (see writeTempFileSync); the kernel's default fault-around window. */
const WRITE_CHUNK = 64 * 1024;

// pid + time + per-process counter: unique among live processes of this host, and O_EXCL turns the
// rare clash (same pid in another pid namespace sharing the directory) into EEXIST, retried below.
function tempPath(path: string, opts: AtomicWriteOptions): string {
  const name = `${opts.hidden === true ? '.' : ''}${basename(path)}.${opts.tempTag ?? 'tmp'}-${process.pid}-${Date.now().toString(36)}-${(tmpSeq++).toString(36)}`;
  return join(dirname(path), name);
}

function openExclusive(path: string, opts: AtomicWriteOptions): { fd: number; tmp: string } {
  for (let attempt = 0; ; attempt++) {
    const tmp = tempPath(path, opts);
    try {
      return { fd: openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, opts.mode ?? 0o644), tmp };
    } catch (e) {
      if (!isSysError(e, 'EEXIST') || attempt >= 3) throw e;
    }
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already renamed or linked away and removed: nothing to clean
  }
}

/**
 * Writes `data` to a new, uniquely named sibling of `path` (created O_EXCL, then written in full and
 * fsynced per `opts`) and returns the temp file's path; the caller renames or links it into place and
 * removes it on failure. On an error here the temp file is removed before the error is rethrown.
 */
export function writeTempFileSync(path: string, data: Uint8Array | string, opts: AtomicWriteOptions = {}): string {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  const { fd, tmp } = openExclusive(path, opts);
  try {
    try {
      // At most WRITE_CHUNK per write: the page cache sizes its folios by the write, and a process
      // mapping a file written in one 100 MB write (the standalone executable) maps whole large
      // folios where it touched one page: weftd's idle RSS was 58-65 MiB from such a file, 45 MiB from
      // the same bytes written in 64 kB pieces (docs/weftd.md, "Memory").
      let off = 0;
      while (off < bytes.length) off += writeSync(fd, bytes, off, Math.min(WRITE_CHUNK, bytes.length - off));
      if (opts.exactMode === true) fchmodSync(fd, opts.mode ?? 0o644); // open() applied the umask
      if (opts.fsync !== false) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    removeQuietly(tmp);
    throw e;
  }
  return tmp;
}

/** Replaces (or creates) `path` with `data` atomically (temp file + rename); the temp file is removed on failure. */
export function writeFileAtomicSync(path: string, data: Uint8Array | string, opts: AtomicWriteOptions = {}): void {
  const tmp = writeTempFileSync(path, data, opts);
  try {
    if (opts.unlinkFirst === true) removeQuietly(path);
    renameSync(tmp, path);
  } catch (e) {
    removeQuietly(tmp);
    throw e;
  }
  if (opts.fsyncDir === true) fsyncDir(dirname(path));
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

/**
 * Replaces `dest` with `data` for runtimes that list and exec its directory (CNI bin and conf dirs):
 * hidden temp name (a stray temp file never looks like a plugin or conflist), exactly `mode` (the
 * umask is not applied), directory fsynced. A running executable is never opened for writing (that
 * fails with ETXTBSY): the new file is renamed over it.
 */
export function publishFileSync(dest: string, data: Uint8Array | string, mode: number): void {
  writeFileAtomicSync(dest, data, { mode, exactMode: true, hidden: true, tempTag: 'weft-tmp', fsyncDir: true });
}

/**
 * Makes `dest` a hard link to `target` atomically: the link is made under a hidden temp name in the
 * same directory and renamed over `dest` (directory fsynced), so a runtime exec'ing `dest` finds the
 * old file or the new one, never none. Both must be on one filesystem (EXDEV otherwise).
 */
export function linkFileAtomicSync(target: string, dest: string): void {
  const tmp = join(dirname(dest), `.${basename(dest)}.weft-tmp-${process.pid}-${Date.now().toString(36)}-${(tmpSeq++).toString(36)}`);
  linkSync(target, tmp);
  try {
    renameSync(tmp, dest);
  } catch (e) {
    removeQuietly(tmp);
    throw e;
  }
  fsyncDir(dirname(dest));
}

// A cache of reservation contents, so that ADD and DEL need not read one file per held address.
// It lives outside the network directory (<dataDir>/.weft-index/<network>.json), which therefore
// stays byte-identical to the reference's, and it is trusted only while the network directory is
// exactly as we left it. Only ever read or written under the network's flock. Runs in any netns.
import { mkdirSync, readFileSync, statSync, unlinkSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { INDEX_DIR } from '../../lib/attach/host-local-files.ts';
import { writeFileAtomicSync } from '../../lib/fs/atomic-write.ts';

const VERSION = 1;

interface IndexFile {
  v: number;
  /** The network directory the index describes (guards against a copied data dir). */
  dir: string;
  /** The directory's mtime in ns when the index was written (see stampDirectory). */
  token: string;
  /** File name -> raw content, for every reservation file. */
  holders: Record<string, string>;
}

/** Where the index of `network` lives. */
export function indexPath(dataDir: string, network: string): string {
  return join(dataDir, INDEX_DIR, `${network}.json`);
}

/**
 * Gives the directory an mtime that no later change can reproduce and returns it (ns), or null when
 * the filesystem cannot store it exactly (e.g. ext4 with 128-byte inodes keeps whole seconds).
 * Why this is a sound validity token: creating, renaming or removing an entry stamps the directory
 * with the current time (coarse: it lags by at most one clock tick, 10 ms at HZ=100). Our stamp
 * is at least one second in the past, so any change made after we release the lock, by us or by
 * the reference binary, gets a strictly later mtime, even within the clock tick of our own last
 * change. Only a wall clock stepped back by over a second between two calls could defeat it.
 */
export function stampDirectory(dir: string): bigint | null {
  const seconds = Math.floor(Date.now() / 1000) - 2;
  const micros = 1 + Math.floor(Math.random() * 999_998);
  const when = seconds + micros / 1e6;
  utimesSync(dir, when, when);
  const ns = statSync(dir, { bigint: true }).mtimeNs;
  const want = BigInt(seconds) * 1_000_000_000n + BigInt(micros) * 1000n;
  const diff = ns > want ? ns - want : want - ns;
  // libuv passes the time as a double and keeps microseconds, so 1 us of rounding is normal; a
  // filesystem that stores whole seconds (or coarser) is off by up to a second.
  return diff <= 10_000n ? ns : null;
}

/** The cached contents when the index matches the directory's current mtime; null otherwise. */
export function loadIndex(dataDir: string, network: string, dir: string): Map<string, string> | null {
  let parsed: IndexFile;
  try {
    parsed = JSON.parse(readFileSync(indexPath(dataDir, network), 'utf8')) as IndexFile;
  } catch {
    return null; // missing or corrupt: the caller reads the files
  }
  if (parsed.v !== VERSION || parsed.dir !== dir || typeof parsed.holders !== 'object' || parsed.holders === null) return null;
  if (String(statSync(dir, { bigint: true }).mtimeNs) !== parsed.token) return null;
  return new Map(Object.entries(parsed.holders));
}

/**
 * Records `holders` (file name -> content) as the state of `dir`: stamps the directory, then writes
 * the index (temp + rename in the index directory, which leaves `dir` untouched). Best effort: on
 * any failure the index is removed, and a stale index can never match a later mtime anyway.
 */
export function saveIndex(dataDir: string, network: string, dir: string, holders: ReadonlyMap<string, string>): void {
  const path = indexPath(dataDir, network);
  try {
    mkdirSync(join(dataDir, INDEX_DIR), { recursive: true, mode: 0o755 });
    const token = stampDirectory(dir);
    if (token === null) {
      unlinkQuietly(path);
      return;
    }
    const doc: IndexFile = { v: VERSION, dir, token: String(token), holders: Object.fromEntries(holders) };
    // Unlink, then rename, no fsync (see unlinkFirst): a crash in between leaves no index, which
    // only means the next call reads the files.
    writeFileAtomicSync(path, JSON.stringify(doc), { mode: 0o644, fsync: false, unlinkFirst: true });
  } catch {
    unlinkQuietly(path);
  }
}

/** Removes the index of `network` (a network that no longer keeps one); absent is fine. */
export function removeIndex(dataDir: string, network: string): void {
  unlinkQuietly(indexPath(dataDir, network));
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

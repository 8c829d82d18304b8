// Materialises the addon embedded in a bundle as a content-addressed file that process.dlopen can
// load. Kept apart from index.ts so the directory and write logic is unit-testable without root.
import { accessSync, constants, lstatSync, mkdirSync } from 'node:fs';
import { writeFileAtomicSync } from '../fs/atomic-write.ts';
import { isLowerHex } from '../text/digits.ts';
import { isSysError } from '../errno/errno.ts';
import { listEntries, removeAll, staleAddons } from './cache-prune.ts';

/**
 * The addon as a bundle carries it (see lib/sys/embedded.ts). The bytes come from a function: V8
 * compiles its body (and makes a heap string of the 37 kB literal) only when it is called, i.e. when
 * the file must be written, so the code cache of a bundle whose addon is already unpacked holds none
 * of it.
 */
export interface EmbeddedAddon {
  sha256: string;
  /** Byte length of the addon (the hot path checks the unpacked file by size). */
  size: number;
  /** The addon's bytes, base64-encoded. */
  base64: () => string;
}

/** Error for a directory we refuse to load native code from (code 'EUNSAFEDIR'). */
export class UnsafeDirError extends Error {
  readonly code = 'EUNSAFEDIR';
  readonly path: string;
  constructor(path: string, reason: string) {
    super(`refusing addon directory ${path}: ${reason}`);
    this.name = 'UnsafeDirError';
    this.path = path;
  }
}

/** Where a bundle may write its addon, best first: /run/weft (root), then $TMPDIR/weft-<uid>. */
export function addonDirCandidates(uid: number = currentUid(), tmp: string = tmpdir()): string[] {
  // A plain '/' join: node:path's join would be compiled at every start for this one call.
  return ['/run/weft', `${tmp}/weft-${uid}`];
}

/**
 * Creates `dir` (mode 0700) when missing, then checks that it is a real directory (not a symlink),
 * owned by `uid`, writable by us and not writable by group or others. Idempotent.
 * Why: we dlopen() a file from here, i.e. run its code with our privileges (root for a CNI plugin).
 * Anyone who can create or rename entries in the directory (another user who pre-created
 * /tmp/weft-0, or a group/world-writable dir, or a symlink to one) could swap in their own .node.
 */
export function ensurePrivateDir(dir: string, uid: number = currentUid()): void {
  // Checked first, created only when missing: the directory exists on every start but the first, and
  // a failing mkdir costs an exception (message, stack) on each of them.
  let st = lstatSync(dir, { throwIfNoEntry: false });
  if (st === undefined) {
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (e) {
      if (!isSysError(e, 'EEXIST')) throw e;
    }
    st = lstatSync(dir);
  }
  // Mode bits rather than st.isDirectory(): each Stats method a start calls first is compiled then.
  if ((st.mode & constants.S_IFMT) !== constants.S_IFDIR) throw new UnsafeDirError(dir, st.isSymbolicLink() ? 'it is a symlink' : 'not a directory');
  if (st.uid !== uid) throw new UnsafeDirError(dir, `owned by uid ${st.uid}, not ${uid}`);
  if ((st.mode & 0o022) !== 0) {
    throw new UnsafeDirError(dir, `writable by group or others (mode ${(st.mode & 0o777).toString(8)})`);
  }
  accessSync(dir, constants.W_OK); // EACCES / EROFS: not usable, the caller tries the next one
}

/** File name of the addon with this sha256 (content-addressed, so versions never collide). */
export function addonFileName(sha256: string): string {
  if (!isLowerHex(sha256, 64)) throw new Error(`weft_sys: bad embedded sha256 ${JSON.stringify(sha256)}`);
  return `weft_sys-${sha256.slice(0, 16)}.node`;
}

/**
 * Ensures `<dir>/weft_sys-<sha16>.node` holds the addon and returns its path. Idempotent and safe
 * against concurrent loaders: the bytes go to a unique temp name in the same directory and are
 * renamed into place (rename(2) is atomic), so nobody ever sees a half-written file. The hot path
 * is one lstat: the hash was computed at build time and only the size is checked here.
 */
export function ensureAddonFile(dir: string, addon: EmbeddedAddon, uid: number = currentUid()): string {
  const path = `${dir}/${addonFileName(addon.sha256)}`;
  try {
    const st = lstatSync(path);
    if ((st.mode & constants.S_IFMT) === constants.S_IFREG && st.size === addon.size && st.uid === uid) return path;
  } catch (e) {
    if (!isSysError(e, 'ENOENT')) throw e;
  }
  const bytes = Buffer.from(addon.base64(), 'base64');
  const actual = nodeCrypto().createHash('sha256').update(bytes).digest('hex');
  if (actual !== addon.sha256 || bytes.length !== addon.size) throw new Error(`weft_sys: embedded addon is corrupt (sha256 ${actual}, expected ${addon.sha256})`);
  // Unique O_EXCL sibling, fsynced (a crash must not leave a renamed but empty file on a disk-backed
  // TMPDIR), renamed over `path`; 0500: the file is only ever read and dlopen'ed by its owner.
  writeFileAtomicSync(path, bytes, { mode: 0o500 });
  try {
    // A new addon file means a new build: the unpacked addons of builds long out of use go (cache-prune.ts).
    removeAll(dir, staleAddons(listEntries(dir), addonFileName(addon.sha256), Date.now()));
  } catch {
    // an unreadable directory only means nothing is cleaned up
  }
  return path;
}

// os.tmpdir() on POSIX, without loading node:os at every start: TMPDIR, TMP, TEMP, else /tmp, with a
// trailing slash dropped.
function tmpdir(): string {
  const env = process.env;
  const dir = env['TMPDIR'] || env['TMP'] || env['TEMP'] || '/tmp';
  return dir.length > 1 && dir.endsWith('/') ? dir.slice(0, -1) : dir;
}

function currentUid(): number {
  return process.getuid?.() ?? 0;
}

// node:crypto costs 4-20 ms to load; only the cold path (first unpack of the addon) needs it, so
// it is fetched on demand instead of imported at the top of every plugin bundle.
function nodeCrypto(): typeof import('node:crypto') {
  return process.getBuiltinModule('node:crypto');
}

// V8 code cache for a bundle's body. A bundle file is: the two header lines, a small loader (this
// module), then the body as line comments (`//` before every line), so Node's own compile of the file
// only scans comments. The loader compiles the body with vm.Script and `cachedData` kept, content-addressed,
// in the same private directory as the native addon (lib/sys/loader.ts rules: 0700, our uid, atomic
// writes); the second run of a body and command writes the cache at exit (the first leaves a mark), including
// the functions that run compiled.
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, readSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { writeFileAtomicSync } from '../fs/atomic-write.ts';
import { addonDirCandidates, ensurePrivateDir } from './loader.ts';
import { listEntries, removeAll, staleCodeCaches } from './cache-prune.ts';
import { traceStep } from '../trace/steps.ts';
import { isShortRun } from './code-cache-hint.ts';
import { isLowerHex } from '../text/digits.ts';

/** The line that separates the loader from the commented body. */
export const BODY_MARKER = '//@weft-body';

/** Comments out `body` line by line (build time). Only '\n' may end lines: CR, U+2028 and U+2029 would end a `//` comment early. */
export function formatCommentedBody(body: string): string {
  if (/[\r\u2028\u2029]/.test(body)) throw new Error('code cache: bundle body contains CR, U+2028 or U+2029; build with charset ascii');
  return `${BODY_MARKER}\n//${body.split('\n').join('\n//')}\n`;
}

/** The body back from a whole bundle file's text; null when the file has no commented body. */
export function parseCommentedBody(text: string): string | null {
  const at = text.indexOf(`\n${BODY_MARKER}\n`);
  if (at < 0) return null;
  const lines = text.slice(at + BODY_MARKER.length + 2).split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((l) => l.slice(2)).join('\n');
}

/**
 * Cache file name: the bundle's name, its body's sha256 (from the build; V8 itself only checks the
 * source length), the Node version, the architecture and the CNI command. One cache per command,
 * because a cache holds the functions its run compiled: a VERSION probe's cache would leave
 * ADD compiling lazily.
 */
export function cacheFileName(bundle: string, bodySha256: string, command = ''): string {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(bundle)) throw new Error(`code cache: bad bundle name ${JSON.stringify(bundle)}`);
  if (!isLowerHex(bodySha256, 64)) throw new Error(`code cache: bad body sha256 ${JSON.stringify(bodySha256)}`);
  const cmd = /^(ADD|DEL|CHECK|GC|STATUS|VERSION)$/.test(command) ? command : 'other';
  return `weft-cc-${bundle}-${bodySha256.slice(0, 16)}-${process.version}-${process.arch}-${cmd}.bin`;
}

/** Removes the caches of other builds of `bundle` that cache-prune.ts judges unused (a rebuilt or upgraded bundle leaves its caches behind in /run, which is RAM). */
function removeStaleCaches(dir: string, bundle: string, bodySha256: string): void {
  removeAll(dir, staleCodeCaches(listEntries(dir), bundle, bodySha256, process.version, Date.now()));
}

/** Reads a cache file if it is a regular file owned by us; undefined otherwise (absent, foreign, unreadable). */
function readCache(path: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    // Mode bits rather than st.isFile(): every Node function a start calls first is compiled then.
    if ((st.mode & constants.S_IFMT) !== constants.S_IFREG || st.uid !== (process.getuid?.() ?? 0) || (st.mode & 0o022) !== 0) return undefined;
    // One read of the size fstat gave (readFileSync would fstat again); a short read means the file is not what fstat said.
    const buf = Buffer.allocUnsafe(st.size);
    return readSync(fd, buf, 0, st.size, 0) === st.size ? buf : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Suffix of the mark a first run leaves instead of its cache (see runCachedSource). */
export const SEEN_SUFFIX = '.seen';

function leaveMark(path: string): void {
  try {
    closeSync(openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o400));
  } catch {
    // best effort: without the mark the next run leaves one again
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // no mark (the cache was rejected, or another run removed it)
  }
}

/** Writes `bytes` to a unique sibling and renames it over `path` (readers never see a partial file); best effort. */
function writeCache(path: string, bytes: Buffer): void {
  try {
    writeFileAtomicSync(path, bytes, { mode: 0o400 });
  } catch {
    // a cache that cannot be written only means the next run compiles again
  }
}

/** The first usable private directory for cache files, or undefined (then the body runs uncached). */
function cacheDir(): string | undefined {
  for (const dir of addonDirCandidates()) {
    try {
      ensurePrivateDir(dir);
      return dir;
    } catch {
      // try the next candidate
    }
  }
  return undefined;
}

type Wrapper = (exports: unknown, require: NodeJS.Require, module: NodeJS.Module, filename: string, dirname: string) => void;

/**
 * Runs the commented body of the bundle file `filename` (bundle `bundle`) as the CommonJS module `mod`,
 * with V8's code cache when one is there for this body (`bodySha256`, computed at build time). Without a usable cache
 * the body runs all the same, and its cache is written when the process exits (from the second such
 * run on: see runCachedSource). Cache problems never
 * fail the run; errors of the body itself propagate as usual.
 */
export function runCachedBody(filename: string, bundle: string, bodySha256: string, mod: NodeJS.Module, req: NodeJS.Require): void {
  // 'utf8', though the file is ASCII (the build checks it): Node reads UTF-8 text in one native call,
  // where any other encoding runs fs's JavaScript read loop, compiled at every start (about 2.7 M
  // instructions, 3.5% of `node -e 0`, measured with cachegrind).
  const body = parseCommentedBody(readFileSync(filename, 'utf8'));
  if (body === null) throw new Error(`code cache: ${filename} has no bundle body`);
  runCachedSource(body, filename, bundle, bodySha256, mod, req);
}

/**
 * Runs `body` (the source of bundle `bundle`, sha256 `bodySha256`) as the CommonJS module `mod` under
 * the name `filename`, through the code cache as runCachedBody does. The standalone executable passes
 * the body it carries as an asset (there is no file to read it from).
 */
export function runCachedSource(body: string, filename: string, bundle: string, bodySha256: string, mod: NodeJS.Module, req: NodeJS.Require): void {
  const vm = process.getBuiltinModule('node:vm');
  const dir = cacheDir();
  const path = dir === undefined ? undefined : `${dir}/${cacheFileName(bundle, bodySha256, process.env['CNI_COMMAND'])}`;
  const cachedData = path === undefined ? undefined : readCache(path);
  traceStep(`code cache ${bundle}: ${cachedData === undefined ? 'none' : `${cachedData.length} bytes`} read`);
  const source = `(function (exports, require, module, __filename, __dirname) {${body}\n})`;
  const script = new vm.Script(source, {
    filename,
    ...(cachedData === undefined ? {} : { cachedData }),
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  traceStep(`code cache ${bundle}: compiled${script.cachedDataRejected === true ? ' (cache rejected)' : ''}`);
  if (path !== undefined && (cachedData === undefined || script.cachedDataRejected === true)) {
    // A cache holds every function its run compiled. The first run of an executable and command on
    // a node often makes what every later run finds in place (the bridge, the nftables table, the
    // unpacked addon): it only leaves a mark, and the next run, a steady-state one, writes the
    // cache (the bridge's ADD: 324 kB instead of 349, less to deserialise at every start). A
    // rejected cache (made by another V8) counts as a mark.
    const mark = `${path}${SEEN_SUFFIX}`;
    const second = cachedData !== undefined || lstatSync(mark, { throwIfNoEntry: false }) !== undefined;
    process.once('exit', (code) => {
      // Only a successful run counts: a refused config or a failed ADD runs a short error path, and
      // its cache, kept for the life of the build, would leave every later ADD compiling most of
      // its functions (a tuning ADD's cache: 63 kB from a failed run against 143 kB, and 1.46x
      // instead of 1.25x `node -e 0` in CPU).
      // Nor a run that said it took a short path (lib/sys/code-cache-hint.ts: a no-op DEL).
      if (code !== 0 || isShortRun()) {
        // nothing: neither the mark nor the cache
      } else if (second) {
        // At exit the functions this run needed are compiled too, so the cache holds them.
        writeCache(path, script.createCachedData());
        removeQuietly(mark);
      } else {
        leaveMark(mark);
      }
      try {
        if (cachedData === undefined && dir !== undefined) removeStaleCaches(dir, bundle, bodySha256);
      } catch {
        // an unreadable directory only means nothing is cleaned up
      }
    });
  }
  const fn = script.runInThisContext() as Wrapper;
  traceStep(`code cache ${bundle}: body starts`);
  fn.call(mod.exports, mod.exports, req, mod, filename, dirname(filename));
}

// The previous release of weft, built once per commit and cached for the upgrade tests. The commit
// (WEFT_PREV_COMMIT, default main at the start of the 2026-12-01 work: 75cc6a1) is taken from this
// clone's git history with `git archive` (no worktree is registered), built with the shared
// node_modules when its dependencies still fit, else with `npm ci` from its own lockfile, and its
// dist/bin is kept under WEFT_PREV_CACHE/<full sha>/bin (default /var/cache/weft/prev-build). A build
// goes to a temp dir and is renamed into place, so concurrent or interrupted runs never see half a cache.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..', '..');
export const PREV_COMMIT = process.env['WEFT_PREV_COMMIT'] ?? '75cc6a1';
const CACHE = process.env['WEFT_PREV_CACHE'] ?? '/var/cache/weft/prev-build';

/** The full sha of `rev` in this clone; throws with a hint when the history does not hold it. */
function resolveCommit(rev: string): string {
  const r = spawnSync('git', ['-C', ROOT, 'rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { encoding: 'utf8' });
  const sha = r.stdout.trim();
  if (r.status !== 0 || !/^[0-9a-f]{40}$/.test(sha)) {
    throw new Error(`previous build: commit ${rev} is not in this clone's history (a shallow clone? run git fetch --unshallow, or set WEFT_PREV_COMMIT)`);
  }
  return sha;
}

/** Runs `npm <args>` in `dir`; returns whether it succeeded, and its output tail for errors. */
function npm(dir: string, args: string[]): { ok: boolean; tail: string } {
  const r = spawnSync('npm', args, { cwd: dir, encoding: 'utf8', maxBuffer: 64 << 20, env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' } });
  return { ok: r.status === 0, tail: `${r.stdout}\n${r.stderr}`.slice(-3000) };
}

/** Builds `sha` in `src`: with the shared node_modules first, with its own `npm ci` when that fails. */
function buildTree(src: string): void {
  symlinkSync(join(ROOT, 'node_modules'), join(src, 'node_modules'));
  if (npm(src, ['run', 'build']).ok) return;
  rmSync(join(src, 'node_modules'), { force: true });
  const ci = npm(src, ['ci', '--prefer-offline']);
  if (!ci.ok) throw new Error(`previous build: npm ci failed:\n${ci.tail}`);
  const b = npm(src, ['run', 'build']);
  if (!b.ok) throw new Error(`previous build: npm run build failed:\n${b.tail}`);
}

/** The bin dir of the previous release (bridge, host-local, portmap, flannel-vxlan, weftd, weft, ...), built on first use. */
export function previousBinDir(rev: string = PREV_COMMIT): string {
  const sha = resolveCommit(rev);
  const final = join(CACHE, sha);
  const bin = join(final, 'bin');
  if (existsSync(join(final, 'complete'))) return bin;
  mkdirSync(CACHE, { recursive: true });
  const work = mkdtempSync(join(CACHE, `.build-${sha.slice(0, 12)}-`));
  try {
    const src = join(work, 'src');
    mkdirSync(src);
    execFileSync('sh', ['-c', `git -C "$1" archive --format=tar "$2" | tar -x -C "$3"`, 'sh', ROOT, sha, src], { stdio: ['ignore', 'ignore', 'pipe'] });
    buildTree(src);
    mkdirSync(join(work, 'bin'));
    for (const f of readdirSync(join(src, 'dist', 'bin'))) copyFileSync(join(src, 'dist', 'bin', f), join(work, 'bin', f));
    // The bundles are CommonJS without an extension: say so beside them, as dist/package.json does.
    writeFileSync(join(work, 'bin', 'package.json'), '{ "type": "commonjs" }\n');
    rmSync(src, { recursive: true, force: true });
    writeFileSync(join(work, 'complete'), `${sha}\n`);
    try {
      renameSync(work, final);
    } catch (e) {
      // Another run finished first (ENOTEMPTY/EEXIST): its cache is as good as ours.
      if (!existsSync(join(final, 'complete'))) throw e;
    }
    return bin;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// The one place tests, demo and bench create, enter and delete network namespaces: throwaway
// namespaces with unique names, cleaned up even on failure (node:test `after` hooks, process exit,
// SIGINT/SIGTERM, and a sweep of those left by crashed runs), the argv that runs a command inside one,
// and `ip -j` queries. Never touches the root network namespace.
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { after } from 'node:test';
import type { TestContext } from 'node:test';
import { run, type ExecResult } from './exec.ts';
import { markOwned, unmarkOwned } from './netns-owners.ts';
import { killProcessesIn, sweepStaleTestNetns, sweepStaleTestNetnsOnce } from './netns-sweep.ts';

export { run, type ExecResult };
export { sweepStaleTestNetns, sweepStaleTestNetnsOnce };

/** A namespace created by this test process (`ip netns add`, so it lives at /run/netns/<name>). */
export interface TestNetns {
  name: string;
  path: string;
  /** Runs `cmd` inside the namespace (`ip netns exec <name> ...cmd`). */
  exec(cmd: string[]): Promise<ExecResult>;
  /** Kills what still runs inside (daemons started there), then deletes the namespace; idempotent. */
  destroy(): Promise<void>;
}

const LOUD_SKIP =
  '########## SKIPPED: needs root (network namespaces); run as root (sudo npm test) to run it ##########';

// Every namespace this process created and has not destroyed yet.
const created = new Set<string>();

/** True when running as root (needed to create namespaces). */
export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** Marks `t` skipped with a loud reason unless root; returns true when skipped (then return early). */
export function skipUnlessRoot(t: TestContext): boolean {
  if (isRoot()) return false;
  process.stderr.write(`${LOUD_SKIP} (${t.name})\n`);
  t.skip(LOUD_SKIP);
  return true;
}

/** Options for describe()/test() that skip the whole block loudly unless root. */
export function rootOnly(): { skip?: string } {
  return isRoot() ? {} : { skip: LOUD_SKIP };
}

/** A unique namespace name `<prefix>-<pid>-<6 hex>` (the sweep recognises it by this form). */
export function uniqueNetnsName(prefix = 'weft-t'): string {
  return `${prefix}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/** argv running `cmd` inside the namespace named `name` (/run/netns/<name>), through `ip netns exec`. */
export function inNetns(name: string, cmd: readonly string[]): string[] {
  return ['ip', 'netns', 'exec', name, ...cmd];
}

/** Starts a long-running process (a daemon) inside namespace `name`; deleting the namespace kills it. */
export function spawnInNetns(name: string, cmd: readonly string[], opts: SpawnOptions = {}): ChildProcess {
  const [file = 'ip', ...args] = inNetns(name, cmd);
  return spawn(file, args, opts);
}

/**
 * argv running `cmd` inside the network namespace at `path` through `nsenter --net` only: for a
 * namespace not under /run/netns (a runtime's sandbox) or a daemon that must keep the caller's
 * mounts (`ip netns exec` also remounts /sys and applies /etc/netns/<name>).
 */
export function inNetnsPath(path: string, cmd: readonly string[]): string[] {
  return ['nsenter', `--net=${path}`, ...cmd];
}

/**
 * argv running `cmd` in a new mount namespace where each [file, over] pair is bind-mounted first
 * (mount errors exit 97). `propagation` 'private' hides later host mounts too; 'slave' lets them in.
 * With `cmd` empty the result is a prefix: append the command to it.
 */
export function inPrivateMounts(binds: ReadonlyArray<readonly [string, string]>, cmd: readonly string[] = [], propagation: 'private' | 'slave' = 'private'): string[] {
  const q = (s: string): string => `'${s.replace(/'/g, `'"'"'`)}'`;
  const mounts = binds.map(([file, over]) => `mount --bind ${q(file)} ${q(over)} || exit 97`);
  return ['unshare', '--mount', '--propagation', propagation, 'sh', '-c', [...mounts, 'exec "$@"'].join('; '), 'sh', ...cmd];
}

function handle(name: string): TestNetns {
  return { name, path: `/run/netns/${name}`, exec: (cmd) => run(inNetns(name, cmd)), destroy: () => deleteNetns(name) };
}

/** Creates a namespace named `<prefix>-<pid>-<random>` (default prefix 'weft-t'). */
export async function createTestNetns(prefix = 'weft-t'): Promise<TestNetns> {
  await sweepStaleTestNetnsOnce();
  const name = uniqueNetnsName(prefix);
  const res = await run(['ip', 'netns', 'add', name]);
  if (res.code !== 0) throw new Error(`ip netns add ${name} failed (${res.code}): ${res.stderr.trim()}`);
  created.add(name);
  markOwned(name);
  return handle(name);
}

/** createTestNetns for synchronous callers (no stale sweep); deleted by destroySync() or the safety nets. */
export function createTestNetnsSync(prefix = 'weft-t'): TestNetns & { destroySync(): void } {
  const name = uniqueNetnsName(prefix);
  addNetnsSync(name);
  return { ...handle(name), destroySync: () => deleteNetnsSync(name) };
}

/**
 * Creates the namespace `name` exactly (a topology's `<prefix>-n1`), tracked like the others: the
 * safety nets delete it unless releaseNetns() hands it over. Throws when it exists.
 */
export function addNetnsSync(name: string): void {
  execFileSync('ip', ['netns', 'add', name], { stdio: ['ignore', 'ignore', 'pipe'] });
  created.add(name);
  markOwned(name);
}

/** Deletes a namespace this process created (`released`: also one handed over by releaseNetns); idempotent, best effort. */
export function deleteNetnsSync(name: string, released = false): void {
  if (!created.has(name) && !released) return;
  created.delete(name);
  killProcessesIn(name);
  try {
    execFileSync('ip', ['netns', 'delete', name], { stdio: 'ignore' });
  } catch {
    // already gone
  }
  unmarkOwned(name);
}

/** Stops tracking `name`: it outlives this process (demo --keep) until someone deletes it. */
export function releaseNetns(name: string): void {
  created.delete(name);
  unmarkOwned(name);
}

/** Namespaces of one suite, paired with node:test: call at describe() (or file) level; an `after` hook of that suite deletes what create() made. */
export function netnsFixture(prefix?: string): { create(): Promise<TestNetns>; destroyAll(): Promise<void> } {
  const made: TestNetns[] = [];
  const destroyAll = async (): Promise<void> => {
    for (const ns of made.splice(0).reverse()) await ns.destroy();
  };
  after(destroyAll);
  return {
    create: async () => {
      const ns = await createTestNetns(prefix);
      made.push(ns);
      return ns;
    },
    destroyAll,
  };
}

/** Runs `fn` with a fresh namespace and deletes it afterwards, also when `fn` fails. */
export async function withTestNetns<T>(fn: (ns: TestNetns) => Promise<T> | T, prefix?: string): Promise<T> {
  const ns = await createTestNetns(prefix);
  try {
    return await fn(ns);
  } finally {
    await ns.destroy();
  }
}

/** Parsed `ip -j <args>` output inside namespace `ns` (by name); throws on a non-zero exit. */
export async function ipJson<T = unknown>(ns: string | { name: string }, args: string[]): Promise<T> {
  const name = typeof ns === 'string' ? ns : ns.name;
  const res = await run(['ip', '-n', name, '-j', ...args]);
  if (res.code !== 0) throw new Error(`ip -n ${name} -j ${args.join(' ')} failed (${res.code}): ${res.stderr.trim()}`);
  const text = res.stdout.trim();
  return (text === '' ? [] : JSON.parse(text)) as T;
}

async function deleteNetns(name: string): Promise<void> {
  if (!created.has(name)) return;
  killProcessesIn(name);
  const res = await run(['ip', 'netns', 'delete', name]);
  created.delete(name);
  unmarkOwned(name);
  if (res.code !== 0 && !/No such file/i.test(res.stderr)) {
    throw new Error(`ip netns delete ${name} failed (${res.code}): ${res.stderr.trim()}`);
  }
}

function deleteAllSync(): void {
  for (const name of [...created].reverse()) deleteNetnsSync(name);
}

// Safety nets: delete every namespace this process still owns when the tests end (an `after` on the
// file's root, registered only under node:test: in the demo or a bench it would start a test run),
// at exit, and on SIGINT/SIGTERM (the runner's timeout), so a failed or interrupted run leaves nothing.
if (process.env['NODE_TEST_CONTEXT'] !== undefined || /\.test\.[cm]?[jt]s$/.test(process.argv[1] ?? '')) {
  after(async () => {
    for (const name of [...created]) await deleteNetns(name);
  });
}
process.on('exit', deleteAllSync);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    deleteAllSync();
    process.kill(process.pid, sig);
  });
}

// Test utilities for root-only tests: throwaway network namespaces with unique names, cleaned up
// even on failure, plus `ip -j` queries inside them. Never touches the root network namespace.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { after } from 'node:test';
import type { TestContext } from 'node:test';
import { run, type ExecResult } from './exec.ts';

export { run, type ExecResult };

/** A namespace created by this test process (`ip netns add`, so it lives at /run/netns/<name>). */
export interface TestNetns {
  name: string;
  path: string;
  /** Runs `cmd` inside the namespace (`ip netns exec <name> ...cmd`). */
  exec(cmd: string[]): Promise<ExecResult>;
  /** Deletes the namespace; idempotent. */
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

/** Creates a namespace named `<prefix>-<pid>-<random>` (default prefix 'weft-t'). */
export async function createTestNetns(prefix = 'weft-t'): Promise<TestNetns> {
  sweeping ??= sweepStaleTestNetns();
  await sweeping;
  const name = `${prefix}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const res = await run(['ip', 'netns', 'add', name]);
  if (res.code !== 0) throw new Error(`ip netns add ${name} failed (${res.code}): ${res.stderr.trim()}`);
  created.add(name);
  return {
    name,
    path: `/run/netns/${name}`,
    exec: (cmd) => run(['ip', 'netns', 'exec', name, ...cmd]),
    destroy: () => deleteNetns(name),
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

let sweeping: Promise<string[]> | undefined;

/**
 * Deletes test namespaces (`weft-...-<pid>-<6 hex>`) left by test processes that no longer exist,
 * e.g. after a crash where no exit hook ran (node:test exits with code 7 and no 'exit' event when
 * an error escapes outside any test). Runs once before the first createTestNetns; returns the names.
 */
export async function sweepStaleTestNetns(): Promise<string[]> {
  if (!isRoot()) return [];
  const list = await run(['ip', 'netns', 'list']);
  const removed: string[] = [];
  for (const line of list.stdout.split('\n')) {
    const name = line.split(' ')[0] ?? '';
    const m = /^weft-[a-z0-9-]*?-(\d+)-[0-9a-f]{6}$/.exec(name);
    if (m === null || processAlive(Number(m[1]))) continue;
    const res = await run(['ip', 'netns', 'delete', name]);
    if (res.code === 0) removed.push(name);
  }
  return removed;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function deleteNetns(name: string): Promise<void> {
  if (!created.has(name)) return;
  const res = await run(['ip', 'netns', 'delete', name]);
  created.delete(name);
  if (res.code !== 0 && !/No such file/i.test(res.stderr)) {
    throw new Error(`ip netns delete ${name} failed (${res.code}): ${res.stderr.trim()}`);
  }
}

function deleteAllSync(): void {
  for (const name of created) {
    try {
      execFileSync('ip', ['netns', 'delete', name], { stdio: 'ignore' });
    } catch {
      // best effort at exit: already gone, or nothing more we can do
    }
    created.delete(name);
  }
}

// Safety nets, registered when a test file imports this module (so `after` lands on the file's
// root): delete every namespace this process still owns when the tests end, at exit, and on
// SIGINT/SIGTERM (the runner's timeout), so a failed or interrupted test leaves nothing behind.
after(async () => {
  for (const name of [...created]) await deleteNetns(name);
});
process.on('exit', deleteAllSync);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    deleteAllSync();
    process.kill(process.pid, sig);
  });
}

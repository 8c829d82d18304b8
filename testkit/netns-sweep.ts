// The stale sweep: namespaces left by test processes that died without running their exit hooks,
// found by the pid in their name or by their owner record, deleted with what still runs in them.
import { execFileSync } from 'node:child_process';
import { run } from './exec.ts';
import { namespacesOfDeadOwners, unmarkOwned } from './netns-owners.ts';

/** Kills every process in namespace `name` (root netns view); a namespace's processes (daemons started with `ip netns exec`) outlive its name. */
export function killProcessesIn(name: string): void {
  let pids: string[];
  try {
    pids = execFileSync('ip', ['netns', 'pids', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split(/\s+/).filter(Boolean);
  } catch {
    return; // namespace gone
  }
  for (const pid of pids) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone
    }
  }
}

let sweeping: Promise<string[]> | undefined;

/**
 * Deletes test namespaces left by test processes that no longer exist (their daemons killed first):
 * those named `weft-...-<pid>-<6 hex>` and those whose owner record (netns-owners.ts) names a dead
 * process, e.g. after a crash where no exit hook ran (node:test exits with code 7 and no 'exit'
 * event when an error escapes outside any test; SIGKILL). Returns the names.
 */
export async function sweepStaleTestNetns(): Promise<string[]> {
  if (process.getuid?.() !== 0) return [];
  const list = await run(['ip', 'netns', 'list']);
  const present = new Set(list.stdout.split('\n').map((line) => line.split(' ')[0] ?? '').filter(Boolean));
  const stale = new Set(namespacesOfDeadOwners());
  for (const name of present) {
    const m = /^weft-[a-z0-9-]*?-(\d+)-[0-9a-f]{6}$/.exec(name);
    if (m !== null && !processAlive(Number(m[1]))) stale.add(name);
  }
  const removed: string[] = [];
  for (const name of stale) {
    if (!present.has(name)) {
      unmarkOwned(name);
      continue;
    }
    killProcessesIn(name);
    const res = await run(['ip', 'netns', 'delete', name]);
    if (res.code === 0) {
      unmarkOwned(name);
      removed.push(name);
    }
  }
  return removed;
}

/** sweepStaleTestNetns once per process (before its first namespace); later calls wait for that one. */
export function sweepStaleTestNetnsOnce(): Promise<string[]> {
  sweeping ??= sweepStaleTestNetns();
  return sweeping;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}


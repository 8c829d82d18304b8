// The file store's allocation lock: flock(2) on DIR/.lock, shared by every weftd using the same
// directory (any network namespace: flock is about the file, not the netns).
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sys } from '../../../lib/sys/index.ts';

/** Name of the lock file inside the store directory. */
export const LOCK_FILE = '.lock';

const queues = new Map<string, Promise<unknown>>();

/**
 * Runs fn while holding an exclusive flock on DIR/.lock. Callers in one process are queued first
 * (no polling among themselves); across processes the lock is polled non-blocking so the event
 * loop never stalls in flock(2). The kernel drops the lock if the process dies, so a crashed
 * weftd never wedges the directory.
 */
export async function withDirLock<T>(dir: string, fn: () => Promise<T> | T, timeoutMs = 15_000): Promise<T> {
  const prev = queues.get(dir) ?? Promise.resolve();
  const run = prev.catch(() => undefined).then(() => lockedRun(dir, fn, timeoutMs));
  queues.set(dir, run);
  try {
    return await run;
  } finally {
    if (queues.get(dir) === run) queues.delete(dir);
  }
}

async function lockedRun<T>(dir: string, fn: () => Promise<T> | T, timeoutMs: number): Promise<T> {
  const fd = openSync(join(dir, LOCK_FILE), 'a', 0o644);
  try {
    const deadline = Date.now() + timeoutMs;
    let delay = 1;
    while (!sys().flock(fd, 'ex', true)) {
      if (Date.now() > deadline) throw new Error(`lease store ${dir}: lock ${LOCK_FILE} still held after ${timeoutMs} ms`);
      await sleep(delay);
      delay = Math.min(delay * 2, 50);
    }
    return await fn();
  } finally {
    // Closing the last fd of the open file description releases the flock.
    closeSync(fd);
  }
}

// Run synchronous work inside another network namespace on the calling (main) thread.
import { sys } from '../sys/index.ts';
import { statSync } from 'node:fs';
import { currentNetnsPath, openNetns } from './handle.ts';
import type { NetnsHandle } from './handle.ts';

/** The thread's namespace as first seen by withNetns, kept open: a plugin switches several times per call and comes back to it every time. */
let kept: NetnsHandle | undefined;

/**
 * A handle of the calling thread's current netns: the kept one when the thread is in it (one stat,
 * instead of open + fstat + readlink), else a fresh one (`fresh` true: the caller closes it).
 */
function homeHandle(): { home: NetnsHandle; fresh: boolean } {
  if (kept !== undefined && !kept.closed) {
    const st = statSync(currentNetnsPath(), { bigint: true }); // follows the magic link to the nsfs inode
    if (st.ino === kept.ino && st.dev === kept.dev) return { home: kept, fresh: false };
    return { home: openNetns(currentNetnsPath()), fresh: true };
  }
  kept = openNetns(currentNetnsPath());
  return { home: kept, fresh: false };
}

/**
 * Runs `fn` with the calling thread inside `target`'s network namespace, then always returns the
 * thread to the namespace it was in (opened before switching), also when `fn` throws.
 *
 * `fn` must be synchronous: setns(2) moves only this thread, and any await would let other
 * callbacks run in the wrong namespace while the continuation ran in the original one. An async
 * function or a returned Promise/thenable is rejected with a TypeError (after switching back).
 *
 * What `fn` creates keeps the namespace it was created in: a netlink (or any) socket is bound to
 * the creating thread's netns for its whole life (sock_create uses current->nsproxy->net_ns,
 * net/socket.c), so a socket opened here still talks to `target` after withNetns returns. The same
 * holds for /proc/sys/net files opened here (see sysctl.ts). Nesting is fine.
 *
 * If switching back fails the process aborts: carrying on in the wrong namespace could configure
 * the host instead of a pod (or the reverse), which is a security bug, not an error to handle.
 */
export function withNetns<T>(target: NetnsHandle, fn: () => T): T {
  if (isAsyncFunction(fn)) {
    throw new TypeError('withNetns: fn must be synchronous (an async function would resume in the wrong netns)');
  }
  const s = sys();
  const { home, fresh } = homeHandle();
  try {
    s.setns(target.fd); // if this throws, the thread never left home
    let result: T;
    try {
      result = fn();
    } finally {
      returnHome(home);
    }
    if (isThenable(result)) {
      // Swallow its eventual rejection: the TypeError below is the error that matters.
      Promise.resolve(result).catch(() => undefined);
      throw new TypeError('withNetns: fn returned a Promise; only synchronous work may run inside a netns');
    }
    return result;
  } finally {
    if (fresh) home.close();
  }
}

function returnHome(home: NetnsHandle): void {
  try {
    sys().setns(home.fd);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    process.stderr.write(`weft: FATAL: cannot return to the original network namespace (${why}); aborting\n`);
    process.abort();
  }
}

function isAsyncFunction(fn: unknown): boolean {
  return typeof fn === 'function' && fn.constructor.name === 'AsyncFunction';
}

function isThenable(x: unknown): x is PromiseLike<unknown> {
  return (
    (typeof x === 'object' || typeof x === 'function') &&
    x !== null &&
    typeof (x as { then?: unknown }).then === 'function'
  );
}

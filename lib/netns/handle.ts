// Network namespace handles: open a namespace file by path, verify it really is a netns, and
// compare namespaces by identity (nsfs dev + inode).
import { closeSync, constants, fstatSync, openSync, readlinkSync, statSync } from 'node:fs';

/** Path of the calling thread's network namespace (thread-self: setns is per thread). */
export function currentNetnsPath(): string {
  return '/proc/thread-self/ns/net';
}

/** Thrown when a path exists but is not a network namespace (code 'ENOTNETNS', our own code). */
export class NotNetnsError extends Error {
  readonly code = 'ENOTNETNS';
  readonly path: string;
  constructor(path: string, found: string) {
    super(`${path} is not a network namespace (it is ${found})`);
    this.name = 'NotNetnsError';
    this.path = path;
  }
}

/** An open network namespace file. The fd keeps the namespace alive until close(). */
export class NetnsHandle {
  readonly path: string;
  readonly dev: bigint;
  readonly ino: bigint;
  #fd: number;

  constructor(fd: number, path: string, dev: bigint, ino: bigint) {
    this.#fd = fd;
    this.path = path;
    this.dev = dev;
    this.ino = ino;
  }

  /** The open fd. Throws once closed: a stale number could name a reused fd and setns elsewhere. */
  get fd(): number {
    if (this.#fd < 0) throw new Error(`netns handle for ${this.path} is closed`);
    return this.#fd;
  }

  /** True once close() has run. */
  get closed(): boolean {
    return this.#fd < 0;
  }

  /** Closes the fd; idempotent. */
  close(): void {
    if (this.#fd < 0) return;
    const fd = this.#fd;
    this.#fd = -1;
    closeSync(fd);
  }
}

/**
 * Opens `path` (O_RDONLY; libuv adds O_CLOEXEC to every open) and checks that it is a network namespace: the kernel names
 * an open nsfs file `net:[<inode>]` in /proc/self/fd (fs/nsfs.c, ns_dname), which no regular file,
 * directory or other namespace type can imitate. Missing path: the fs error (code 'ENOENT');
 * anything else that is not a netns: NotNetnsError (code 'ENOTNETNS'). Works from any netns.
 */
export function openNetns(path: string): NetnsHandle {
  if (typeof path !== 'string' || path === '') throw new NotNetnsError(String(path), 'an empty path');
  // O_NONBLOCK: a FIFO at `path` must not hang us in open(2); it is meaningless for nsfs files.
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const st = fstatSync(fd, { bigint: true });
    const link = readlinkSync(`/proc/self/fd/${fd}`);
    if (link !== `net:[${st.ino}]`) throw new NotNetnsError(path, describe(link));
    return new NetnsHandle(fd, path, st.dev, st.ino);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

function describe(link: string): string {
  const m = /^([a-z_]+):\[\d+\]$/.exec(link);
  return m !== null ? `a ${m[1] ?? '?'} namespace` : `not a namespace file (${link})`;
}

/** True when `a` and `b` name the same network namespace (same nsfs dev and inode). */
export function isSameNetns(a: string | NetnsHandle, b: string | NetnsHandle): boolean {
  const ia = identity(a);
  const ib = identity(b);
  return ia.dev === ib.dev && ia.ino === ib.ino;
}

/** True when `path` is the calling thread's own network namespace (CNI: refuse unless overridden). */
export function isOwnNetns(path: string | NetnsHandle): boolean {
  return isSameNetns(path, currentNetnsPath());
}

function identity(x: string | NetnsHandle): { dev: bigint; ino: bigint } {
  if (typeof x !== 'string') return { dev: x.dev, ino: x.ino };
  const st = statSync(x, { bigint: true }); // follows /proc/.../ns/net magic links to the nsfs inode
  return { dev: st.dev, ino: st.ino };
}

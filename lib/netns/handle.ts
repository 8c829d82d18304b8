// Network namespace handles: open a namespace file by path, verify it really is a netns, and
// compare namespaces by identity (nsfs dev + inode).
import { closeSync, constants, fstatSync, openSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { sys } from '../sys/index.ts';
import { errnoCode } from '../errno/errno.ts';

/** CLONE_NEWNET (linux/sched.h): what NS_GET_NSTYPE answers for a network namespace. */
const CLONE_NEWNET = 0x40000000;

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

// open(2) errors that mean "this path is something that is not a namespace": ENXIO for a UNIX socket
// or a device without a driver (fs/open.c, drivers), ENOTDIR when a component is a file, ELOOP for a
// symlink loop. They become NotNetnsError so plugins answer "not a netns" instead of 999.
const NOT_NETNS_OPEN_ERRORS = new Set(['ENXIO', 'ENODEV', 'ENOTDIR', 'ELOOP']);

function openOrNotNetns(path: string): number {
  try {
    return openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    const code = errnoCode(e);
    if (code !== undefined && NOT_NETNS_OPEN_ERRORS.has(code)) throw new NotNetnsError(path, `unopenable (${code})`);
    throw e;
  }
}

/**
 * Opens `path` (O_RDONLY; libuv adds O_CLOEXEC to every open) and checks that it is a network
 * namespace, by the name the kernel gives the open file (see nsfsName). Works from any netns.
 * Missing path: the fs error (code 'ENOENT'); anything else that is not a netns: NotNetnsError
 * (code 'ENOTNETNS'), which callers map to CNI errors.
 */
export function openNetns(path: string): NetnsHandle {
  if (typeof path !== 'string' || path === '') throw new NotNetnsError(String(path), 'an empty path');
  // O_NONBLOCK: a FIFO at `path` must not hang us in open(2); it is meaningless for nsfs files.
  const fd = openOrNotNetns(path);
  try {
    const st = fstatSync(fd, { bigint: true });
    // The kernel's own answer (one ioctl) when it gives one; otherwise, and for anything that is not
    // a network namespace (to name what it is), the nsfs name.
    if (nsTypeOf(fd) !== CLONE_NEWNET) {
      const name = nsfsName(fd);
      if (name !== `net:[${st.ino}]`) throw new NotNetnsError(path, describe(name));
    }
    return new NetnsHandle(fd, path, st.dev, st.ino);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/** NS_GET_NSTYPE of fd; undefined when it cannot tell (not a namespace file, a kernel before 4.11, no addon). */
function nsTypeOf(fd: number): number | undefined {
  try {
    return sys().nsType(fd);
  } catch {
    return undefined;
  }
}

/**
 * The nsfs name (`<type>:[<inode>]`) of an open namespace file, else its path. Everything is read
 * through the fd, so the answer is about the file we hold, not whatever `path` names now.
 * - Opened through a /proc/<pid>/ns link, the file sits on the internal nsfs mount and the kernel
 *   names it `net:[<inode>]` in /proc/self/fd (fs/nsfs.c ns_dname); no regular file can imitate
 *   that, since real paths start with '/'.
 * - Opened through a bind mount (`ip netns add`, containerd, podman: /run/netns/<name>), d_path
 *   gives the mount point instead, but the mount's root in /proc/self/mountinfo is `net:[<inode>]`
 *   on an nsfs mount; the fd's mount is found by the mnt_id in /proc/self/fdinfo/<fd>.
 */
function nsfsName(fd: number): string {
  const link = readlinkSync(`/proc/self/fd/${fd}`);
  if (NSFS_NAME.test(link)) return link;
  const mntId = /^mnt_id:\s*(\d+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
  if (mntId === undefined) return link;
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    if (!line.startsWith(`${mntId} `)) continue;
    // "<id> <parent> <maj:min> <root> <mount point> <opts> [optional...] - <fstype> <source> <super opts>"
    const fields = line.split(' ');
    const fstype = fields[fields.indexOf('-') + 1];
    const root = fields[3] ?? '';
    return fstype === 'nsfs' && NSFS_NAME.test(root) ? root : link;
  }
  return link;
}

const NSFS_NAME = /^[a-z_]+:\[\d+\]$/;

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

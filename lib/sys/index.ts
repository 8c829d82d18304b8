// Typed entry point to weft's only native code (lib/sys/*.c: weft_sys.c, with the udp backend's packet I/O in tun_io.c and udp_io.c). The addon is loaded lazily on
// the first sys() call, never at import time, so commands such as VERSION pay nothing for it.
// Bundles embed one of two builds (scripts/build/addon.ts): weftd the full one; the plugins the lean
// one, which lacks tunOpen, setNonBlocking, setTxQueueLen and the batched packet I/O (weftd-only calls).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { EMBEDDED_ADDON } from './embedded.ts';
import { addonDirCandidates, ensureAddonFile, ensurePrivateDir } from './loader.ts';
import type { EmbeddedAddon } from './loader.ts';

/** The native surface. Every call is synchronous and acts on the calling thread. */
export interface Sys {
  /** setns(fd, CLONE_NEWNET) on the calling thread. */
  setns(fd: number): void;
  /** ioctl(fd, NS_GET_NSTYPE): the CLONE_NEW* type of the namespace open at fd (Linux 4.11+); ENOTTY for a file that is not a namespace. */
  nsType(fd: number): number;
  /**
   * flock(2). op 'sh' | 'ex' | 'un'. `wait` true: LOCK_NB, false instead of waiting when the lock is held;
   * a number: a blocking wait of at most that many ms (woken by the kernel when the holder lets go), false when still held; absent: block.
   */
  flock(fd: number, op: 'sh' | 'ex' | 'un', wait?: boolean | number): boolean;
  /** Opens /dev/net/tun and TUNSETIFF with IFF_TUN | IFF_NO_PI (| IFF_VNET_HDR with vnetHdr) for `name`; returns the fd and the kernel's name. */
  tunOpen(name: string, vnetHdr?: boolean): { fd: number; name: string };
  /** socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol), bound (nl_pid 0 = kernel assigns) to the multicast `groups` bitmask, SO_RCVBUF 1 MiB, NETLINK_EXT_ACK on. Lives in the calling thread's netns for ever. */
  nlOpen(protocol: number, groups: number): number;
  /** setsockopt NETLINK_ADD_MEMBERSHIP for one group number (needed for groups > 32). */
  nlAddMembership(fd: number, group: number): void;
  /** send one netlink message (or a batch of concatenated messages) to the kernel (nl_pid 0). */
  nlSend(fd: number, msg: Uint8Array): void;
  /** Receive one datagram, whatever its size. timeoutMs -1 blocks; 0 polls; returns null on timeout. */
  nlRecv(fd: number, timeoutMs: number): Buffer | null;
  /**
   * libuv readiness watch (uv_poll, readable) on any fd; cb runs on the event loop. Returns an id for pollStop. The handle does not keep the loop alive unless ref is true.
   * Level-triggered: cb must drain the fd (e.g. nlRecv(fd, 0) until null) or it fires again at once; it also fires on a socket error so the read can report it.
   * At most one watch per fd (libuv misbehaves with two), and pollStop it before closing the fd. Regular files are refused (EPERM from epoll).
   */
  pollStart(fd: number, cb: () => void, ref?: boolean): number;
  /** Stops a watch started by pollStart; an unknown or already stopped id is a no-op. */
  pollStop(id: number): void;
  /** fcntl O_NONBLOCK on (the batched reads below must never block the event loop). */
  setNonBlocking(fd: number): void;
  // Batched packet I/O (udp backend): packet i lives in buf at i * slot, its length in lens[i];
  // count <= 1024 and count * slot <= buf.length. Nothing is allocated per packet.
  /** read(2) on a non-blocking TUN fd until EAGAIN or `max` packets; returns how many were read. */
  tunReadBatch(fd: number, buf: Uint8Array, slot: number, lens: Uint32Array, max: number, vnet?: boolean): number;
  /**
   * write(2) of each packet with lens[i] > 0 to a TUN fd; refused packets are dropped; returns how many were written.
   * vnet (a TUN opened with vnetHdr): in-order TCP/IPv4 segments of one flow are coalesced into one superpacket write (GRO in userspace; noCoalesce turns that off); headers of coalesced packets in buf are rewritten.
   */
  tunWriteBatch(fd: number, buf: Uint8Array, slot: number, lens: Uint32Array, count: number, vnet?: boolean, noCoalesce?: boolean): number;
  /** TUNSETOFFLOAD on a vnetHdr TUN: with tso, TUN_F_CSUM | TUN_F_TSO4 (tunReadBatch then segments TCP superpackets and completes partial checksums). */
  tunSetOffload(fd: number, tso: boolean): void;
  /** SIOCSIFTXQLEN: the transmit queue length of interface `name` (calling thread's netns). */
  setTxQueueLen(name: string, qlen: number): void;
  /** A non-blocking IPv4 UDP socket bound to addr:port (in the calling thread's netns), socket buffers forced to bufBytes. */
  udpOpen(addr: string, port: number, bufBytes: number): number;
  /** recvmmsg(2) without waiting, up to `max`; srcs[i] = sender IPv4 (host order); truncated datagrams get length 0. Returns the count. */
  udpRecvBatch(fd: number, buf: Uint8Array, slot: number, lens: Uint32Array, max: number, srcs: Uint32Array): number;
  /**
   * sendmmsg(2) of each packet with lens[i] > 0 to dsts[i]:port (host-order IPv4); stops at a full socket buffer. Returns how many packets were sent (in order).
   * gso: runs of same-peer, same-size packets go as one UDP_SEGMENT message (the same datagrams on the wire); falls back to one message per packet if the kernel refuses.
   */
  udpSendBatch(fd: number, buf: Uint8Array, slot: number, lens: Uint32Array, count: number, dsts: Uint32Array, port: number, gso?: boolean): number;
}

/** What every failing native call throws: message like `setns: Invalid argument (EINVAL)`. */
export interface SysError extends Error {
  /** errno name, e.g. 'ENOENT'. */
  code: string;
  /** Positive errno number. */
  errno: number;
  /** The failing call, e.g. 'setns', 'TUNSETIFF', 'bind'. */
  syscall: string;
}

let loaded: Sys | undefined;

/** The native addon, loaded on first use (embedded copy in a bundle, node-gyp build in the tree). */
export function sys(): Sys {
  loaded ??= EMBEDDED_ADDON === null ? loadFromSourceTree() : loadEmbedded(EMBEDDED_ADDON);
  return loaded;
}

function dlopen(path: string): Sys {
  const mod = { exports: {} as Record<string, unknown> };
  process.dlopen(mod, path);
  return mod.exports as unknown as Sys;
}

// Source tree (tsx, tests): the node-gyp output next to this file. import.meta.url is only read
// here, so a CommonJS bundle (where it is empty) never evaluates it.
function loadFromSourceTree(): Sys {
  const path = fileURLToPath(new URL('./build/Release/weft_sys.node', import.meta.url));
  if (!existsSync(path)) {
    throw new Error(`weft_sys: native addon not built (${path} is missing); run \`npm run build\` (or \`npx node-gyp rebuild -C lib/sys\`)`);
  }
  return dlopen(path);
}

// Bundle: unpack once into a private directory, then dlopen. If loading from one directory fails
// (e.g. it sits on a noexec mount), the next candidate is tried before giving up.
function loadEmbedded(addon: EmbeddedAddon): Sys {
  const candidates = addonDirCandidates();
  const reasons: string[] = [];
  for (const dir of candidates) {
    try {
      ensurePrivateDir(dir);
    } catch (e) {
      reasons.push(`${dir}: ${errorText(e)}`);
      continue;
    }
    try {
      return dlopen(ensureAddonFile(dir, addon));
    } catch (e) {
      reasons.push(`${dir}: ${errorText(e)}`);
    }
  }
  throw new Error(`weft_sys: cannot load the embedded native addon (${reasons.join('; ')})`);
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

// The Store the allocator sees: reservations keyed by address, the last reserved address per range
// set, and an exclusive lock. The disk store (reference layout) and the memory store implement it.
import type { Holder } from '../../lib/attach/host-local-files.ts';
import type { IpAddr } from '../../lib/ip/index.ts';

/** One reservation as found in the store. */
export interface Allocation extends Holder {
  readonly ip: IpAddr;
}

/** What a locked section also guards. */
export interface LockOptions {
  /**
   * Also hold the other networks of the data dir still (the disk store: a shared flock on each one's
   * lock file) and refuse, in reserve, every address one of them holds: an ADD never hands out an
   * address a pod holds under another network name (kube-flannel's `cbr0` after a rename).
   */
  readonly siblings?: boolean;
}

/** Reservation storage; every method except withLock/close must run inside withLock. */
export interface Store {
  /** Runs fn holding the store's exclusive lock; the disk store flocks <dataDir>/<network>/lock. */
  withLock<T>(fn: () => T, opts?: LockOptions): T;
  /**
   * Reserves `ip` for the attachment unless someone holds it (in a section with `siblings`, under
   * another network name too); true when reserved. Also records it as
   * the last reserved address of range set `rangeSetIndex` (round-robin continues after it).
   */
  reserve(containerId: string, ifname: string, ip: IpAddr, rangeSetIndex: number): boolean;
  /** In a section with `siblings`: the other network holding `ip`, if any (the memory store has none). */
  heldElsewhere?(ip: IpAddr): string | undefined;
  /** The last address reserved from range set `rangeSetIndex`, or null when unknown. */
  lastReservedIp(rangeSetIndex: number): IpAddr | null;
  /** Every reservation (the addresses held, with their holders). */
  list(): Allocation[];
  /** Frees one address; false when it was not held. */
  release(ip: IpAddr): boolean;
  /** Releases the store's resources (fds); idempotent. */
  close(): void;
}

/**
 * The reference's matching rule for one attachment: files holding `<id>\r\n<ifname>`; only when
 * there are none, legacy files holding just `<id>` (disk backend ReleaseByID / FindByID).
 */
export function allocationsOf(all: readonly Allocation[], containerId: string, ifname: string): Allocation[] {
  const id = containerId.trim();
  const exact = all.filter((a) => a.containerId === id && a.ifname === ifname);
  if (exact.length > 0) return exact;
  return all.filter((a) => a.containerId === id && a.ifname === null);
}

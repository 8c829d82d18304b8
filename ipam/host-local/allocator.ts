// The allocator: one address per range set, requested or round-robin from the last reserved one,
// all under the store's lock; a failure releases what this call took. Sees only the Store interface.
import type { IpAddr } from '../../lib/ip/index.ts';
import { formatIp, ipEqual } from '../../lib/ip/index.ts';
import { duplicateAllocation, rangeExhausted, requestedIsGateway, requestedNotInRange, requestedUnavailable } from './errors.ts';
import type { IpRange, RangeSet } from './range.ts';
import { formatRangeSet, iterateRangeSet, rangeFor } from './range.ts';
import type { Holder } from '../../lib/attach/host-local-files.ts';
import type { Allocation, Store } from './store.ts';
import { allocationsOf } from './store.ts';

/** One address handed out, with the range it came from (for prefix length and gateway). */
export interface AllocatedIp {
  readonly ip: IpAddr;
  readonly range: IpRange;
  readonly rangeSetIndex: number;
}

/** An attachment: the (containerID, ifname) pair that owns addresses. */
export interface Attachment {
  readonly containerId: string;
  readonly ifname: string;
}

function takeRequested(set: RangeSet, pending: IpAddr[]): IpAddr | undefined {
  const i = pending.findIndex((ip) => rangeFor(set, ip) !== undefined);
  return i < 0 ? undefined : pending.splice(i, 1)[0];
}

function allocateRequested(store: Store, set: RangeSet, index: number, at: Attachment, ip: IpAddr): AllocatedIp {
  const range = rangeFor(set, ip) as IpRange;
  if (ipEqual(ip, range.gateway)) throw requestedIsGateway(formatIp(ip));
  if (!store.reserve(at.containerId, at.ifname, ip, index)) throw requestedUnavailable(formatIp(ip), formatRangeSet(set), store.heldElsewhere?.(ip));
  return { ip, range, rangeSetIndex: index };
}

function allocateNext(store: Store, set: RangeSet, index: number, at: Attachment, held: readonly Allocation[]): AllocatedIp {
  // The spec forbids a second address for one attachment from the same set (the reference checks too).
  for (const a of allocationsOf(held, at.containerId, at.ifname)) {
    if (rangeFor(set, a.ip)) throw duplicateAllocation(formatIp(a.ip), at.containerId, at.ifname);
  }
  // Each refused candidate is a distinct held address, so a free one turns up within held.length + 1
  // tries even in a huge IPv6 set; a full set ends the iteration after one lap.
  for (const { ip, range } of iterateRangeSet(set, store.lastReservedIp(index))) {
    if (store.reserve(at.containerId, at.ifname, ip, index)) return { ip, range, rangeSetIndex: index };
  }
  throw rangeExhausted(index, formatRangeSet(set));
}

/**
 * Checks the requested addresses against the range sets alone (no store, nothing touched): each lies
 * in a set, is not its gateway, and no set is asked for two. The same codes allocate() would give
 * (112, 114), so ADD can refuse before the first change to the node.
 */
export function checkRequested(sets: readonly RangeSet[], requested: readonly IpAddr[]): void {
  const pending = [...requested];
  for (const set of sets) {
    const want = takeRequested(set, pending);
    if (want !== undefined && ipEqual(want, (rangeFor(set, want) as IpRange).gateway)) throw requestedIsGateway(formatIp(want));
  }
  if (pending.length > 0) throw requestedNotInRange(pending.map(formatIp));
}

/**
 * Allocates one address from each range set for the attachment (idempotence is not promised: a
 * second ADD for the same attachment fails with code 113). Requested addresses are honoured per set,
 * at most one each; any left over fail the whole call (112). Runs under the store lock, the other
 * networks of the data dir held still (`siblings`), so an address held under another network name
 * is never handed out; on any error the addresses taken by this call are released before the error
 * propagates.
 */
export function allocate(store: Store, sets: readonly RangeSet[], at: Attachment, requested: readonly IpAddr[]): AllocatedIp[] {
  return store.withLock(() => {
    const taken: AllocatedIp[] = [];
    const pending = [...requested];
    try {
      const held = store.list();
      sets.forEach((set, index) => {
        const want = takeRequested(set, pending);
        taken.push(want ? allocateRequested(store, set, index, at, want) : allocateNext(store, set, index, at, held));
      });
      if (pending.length > 0) throw requestedNotInRange(pending.map(formatIp));
      return taken;
    } catch (e) {
      for (const t of taken) store.release(t.ip);
      throw e;
    }
  }, { siblings: true });
}

/** Frees every address of the attachment (reference matching, legacy ID-only files included); idempotent. */
export function releaseAttachment(store: Store, at: Attachment): Allocation[] {
  return store.withLock(() => {
    const mine = allocationsOf(store.list(), at.containerId, at.ifname);
    for (const a of mine) store.release(a.ip);
    return mine;
  });
}

/** The addresses the attachment holds (empty when none). */
export function findAttachment(store: Store, at: Attachment): Allocation[] {
  return store.withLock(() => allocationsOf(store.list(), at.containerId, at.ifname));
}

function isValid(a: Holder, valid: readonly Attachment[]): boolean {
  // A legacy ID-only file belongs to whichever interface of that container is still valid.
  return valid.some((v) => v.containerId.trim() === a.containerId && (a.ifname === null || v.ifname === a.ifname));
}

/** GC (spec 1.1): frees every address whose holder is not among `valid`; returns what was freed. */
export function collectGarbage(store: Store, valid: readonly Attachment[]): Allocation[] {
  return store.withLock(() => {
    const stale = store.list().filter((a) => !isValid(a, valid));
    for (const a of stale) store.release(a.ip);
    return stale;
  });
}

// Address ranges and range sets: defaults, validation and the reference's round-robin order.
import type { Cidr, IpAddr } from '../../lib/ip/index.ts';
import {
  canonicalCidr,
  cidrContains,
  compareIp,
  formatCidr,
  formatIp,
  familyBits,
  hasHostBits,
  lastOf,
  networkOf,
  nextIp,
} from '../../lib/ip/index.ts';

/** One range after normalizeRange: every bound filled in, all of one family. */
export interface IpRange {
  readonly subnet: Cidr;
  readonly rangeStart: IpAddr;
  readonly rangeEnd: IpAddr;
  readonly gateway: IpAddr;
}

/** The ranges one address is taken from (one address per set per ADD); all of one family. */
export type RangeSet = readonly IpRange[];

/** A range as written in the config, with its addresses already parsed (undefined = not given). */
export interface RangeInput {
  subnet: Cidr;
  rangeStart?: IpAddr | undefined;
  rangeEnd?: IpAddr | undefined;
  gateway?: IpAddr | undefined;
}

/** Thrown by the normalisers; config.ts turns it into code 7 naming the range set. */
export class RangeConfigError extends Error {
  override name = 'RangeConfigError';
}

function fail(msg: string): never {
  throw new RangeConfigError(msg);
}

/**
 * Fills in the reference's defaults: gateway = network + 1; rangeStart = network + 1 (the gateway is
 * skipped when iterating, not excluded from the range); rangeEnd = the last address, minus one
 * for IPv4 (the broadcast address). Refuses host bits in the subnet and prefixes leaving fewer
 * than two host bits (/31, /32, /127, /128), like the reference.
 */
export function normalizeRange(input: RangeInput): IpRange {
  const s = input.subnet;
  const bits = familyBits(s.addr.family);
  if (hasHostBits(s)) {
    fail(`subnet ${formatCidr(s)} has host bits set; the network address is ${formatIp(networkOf(s))}`);
  }
  if (s.prefix > bits - 2) fail(`subnet ${formatCidr(s)} is too small to allocate from`);
  const net = networkOf(s);
  const inSubnet = (what: string, a: IpAddr): IpAddr => {
    if (a.family !== s.addr.family) fail(`${what} ${formatIp(a)} is not the same family as subnet ${formatCidr(s)}`);
    if (!cidrContains(s, a)) fail(`${what} ${formatIp(a)} is not in subnet ${formatCidr(s)}`);
    return a;
  };
  // The reference (1.1.1) accepts a gateway outside the subnet; only the family must match.
  const gateway = input.gateway ?? nextIp(net);
  if (gateway.family !== s.addr.family) fail(`gateway ${formatIp(gateway)} is not the same family as subnet ${formatCidr(s)}`);
  const rangeStart = inSubnet('rangeStart', input.rangeStart ?? nextIp(net));
  const last = lastOf(s);
  const rangeEnd = inSubnet('rangeEnd', input.rangeEnd ?? (s.addr.family === 4 ? { family: 4, value: last.value - 1n } : last));
  if (compareIp(rangeStart, rangeEnd) > 0) fail(`rangeStart ${formatIp(rangeStart)} is after rangeEnd ${formatIp(rangeEnd)}`);
  return { subnet: canonicalCidr(s), rangeStart, rangeEnd, gateway };
}

/** True when `a` is between the range's start and end (inclusive), hence inside its subnet. */
export function rangeContains(r: IpRange, a: IpAddr): boolean {
  // normalizeRange put both bounds inside the subnet, and a prefix is contiguous, so the bounds
  // alone decide; no mask arithmetic on the per-candidate path.
  return a.family === r.rangeStart.family && a.value >= r.rangeStart.value && a.value <= r.rangeEnd.value;
}

/** True when two ranges share an address (bounds are inclusive). */
export function rangesOverlap(a: IpRange, b: IpRange): boolean {
  if (a.subnet.addr.family !== b.subnet.addr.family) return false;
  return a.rangeStart.value <= b.rangeEnd.value && b.rangeStart.value <= a.rangeEnd.value;
}

/** "start-end", as the reference prints a range in messages. */
export function formatRange(r: IpRange): string {
  return `${formatIp(r.rangeStart)}-${formatIp(r.rangeEnd)}`;
}

/** "start-end,start-end", as the reference prints a range set. */
export function formatRangeSet(set: RangeSet): string {
  return set.map(formatRange).join(',');
}

/** Checks a set: non-empty, one family, no two ranges overlapping. Returns it unchanged. */
export function validateRangeSet(set: RangeSet): RangeSet {
  const first = set[0];
  if (first === undefined) fail('empty range set');
  for (const r of set) {
    if (r.subnet.addr.family !== first.subnet.addr.family) fail('mixed address families');
  }
  for (let i = 0; i < set.length; i++) {
    for (let j = i + 1; j < set.length; j++) {
      const a = set[i];
      const b = set[j];
      if (a && b && rangesOverlap(a, b)) fail(`ranges ${formatRange(a)} and ${formatRange(b)} overlap`);
    }
  }
  return set;
}

/** The range of the set holding `a`, or undefined. */
export function rangeFor(set: RangeSet, a: IpAddr): IpRange | undefined {
  return set.find((r) => rangeContains(r, a));
}

/** True when two sets share an address. */
export function rangeSetsOverlap(a: RangeSet, b: RangeSet): boolean {
  return a.some((x) => b.some((y) => rangesOverlap(x, y)));
}

/** Number of allocatable addresses in the set (range sizes minus gateways that fall inside). */
export function rangeSetCapacity(set: RangeSet): bigint {
  let n = 0n;
  for (const r of set) {
    n += r.rangeEnd.value - r.rangeStart.value + 1n;
    if (rangeContains(r, r.gateway)) n -= 1n;
  }
  return n;
}

/**
 * Candidate addresses in the reference's round-robin order: ranges in order, each from start to end,
 * starting just after `last` when the set holds it (so `last` itself comes last), else at the first
 * range's start; the current range's gateway is skipped. Every address is yielded at most once.
 */
export function* iterateRangeSet(set: RangeSet, last: IpAddr | null): Generator<{ ip: IpAddr; range: IpRange }> {
  const n = set.length;
  if (n === 0) return;
  let idx = 0;
  let cur = (set[0] as IpRange).rangeStart.value;
  const lastIdx = last === null ? -1 : set.findIndex((r) => rangeContains(r, last));
  if (last !== null && lastIdx >= 0) {
    idx = lastIdx;
    cur = last.value;
    [idx, cur] = advance(set, idx, cur);
  }
  const startIdx = idx;
  const startVal = cur;
  do {
    const r = set[idx] as IpRange;
    if (cur !== r.gateway.value) yield { ip: { family: r.rangeStart.family, value: cur }, range: r };
    [idx, cur] = advance(set, idx, cur);
  } while (idx !== startIdx || cur !== startVal);
}

function advance(set: RangeSet, idx: number, cur: bigint): [number, bigint] {
  const r = set[idx] as IpRange;
  if (cur !== r.rangeEnd.value) return [idx, cur + 1n];
  const next = (idx + 1) % set.length;
  return [next, (set[next] as IpRange).rangeStart.value];
}

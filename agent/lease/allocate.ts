// Subnet choice for a new lease, as flannel does it, the same for both families: the free /SubnetLen
// (/IPv6SubnetLen) subnets from SubnetMin (IPv6SubnetMin) upwards, at most 100 of them, are
// candidates and one is picked at random, so that nodes starting together rarely race for the same
// one; the store's exclusive create settles the rest.
import { type Cidr, type Family, cidrOverlaps, familyBits, formatCidr, hasHostBits, lastOf, parseCidr, parseIp } from '../../lib/ip/index.ts';
import { type NetConf, familyNetConf, hasIPv6 } from '../config/net-conf.ts';
import { type AcquireOptions, type Lease, NO_IPV4_ADDRESS, NO_IPV4_SUBNET, isIpv6Only } from './store.ts';

/** Candidate window size, as in flannel's allocateSubnet. */
export const MAX_CANDIDATES = 100;

/** One family's allocation range of a net-conf: subnet length and the lowest and highest subnet address. */
interface Range {
  family: Family;
  len: number;
  min: bigint;
  max: bigint;
}

function rangeOf(conf: NetConf, family: Family): Range | null {
  const f = familyNetConf(conf, family);
  const min = parseIp(f?.subnetMin ?? '');
  const max = parseIp(f?.subnetMax ?? '');
  if (f === undefined || min?.family !== family || max?.family !== family) return null;
  return { family, len: f.subnetLen, min: min.value, max: max.value };
}

/** A subnet of the family in network form, or null (other family, host bits set, or not a CIDR). */
function parseSubnet(s: string, family: Family): Cidr | null {
  const c = parseCidr(s);
  return c !== null && c.addr.family === family && !hasHostBits(c) ? c : null;
}

/** True when `subnet` is a lease of `family` this config could have handed out (right length, within its SubnetMin..SubnetMax). */
export function isSubnetCompatible(conf: NetConf, family: Family, subnet: string | undefined): boolean {
  const r = rangeOf(conf, family);
  const c = subnet === undefined ? null : parseSubnet(subnet, family);
  if (r === null || c === null || c.prefix !== r.len) return false;
  return c.addr.value >= r.min && c.addr.value <= r.max;
}

/** The first free subnets of `family` (up to `limit`) between its SubnetMin and SubnetMax that overlap none of `taken`. */
export function freeSubnets(conf: NetConf, family: Family, taken: Iterable<string>, limit = MAX_CANDIDATES): string[] {
  const r = rangeOf(conf, family);
  if (r === null) return [];
  const used: Cidr[] = [];
  for (const t of taken) {
    const c = parseSubnet(t, family);
    if (c !== null) used.push(c);
  }
  used.sort((a, b) => (a.addr.value < b.addr.value ? -1 : a.addr.value > b.addr.value ? 1 : 0));
  const size = 1n << BigInt(familyBits(family) - r.len);
  const out: string[] = [];
  let u = 0; // index into the sorted `used`: every entry before it ends below the current candidate
  for (let v = r.min; v <= r.max && out.length < limit; v += size) {
    const cand: Cidr = { addr: { family, value: v }, prefix: r.len };
    while (u < used.length && lastOf(used[u] as Cidr).value < v) u++;
    let clash = false;
    for (let i = u; i < used.length && (used[i] as Cidr).addr.value <= v + size - 1n; i++) {
      if (cidrOverlaps(cand, used[i] as Cidr)) { clash = true; break; }
    }
    if (!clash) out.push(formatCidr(cand));
  }
  return out;
}

/** A random free subnet of `family`, or null when none is left. `random` returns [0,1) (injectable for tests). */
export function pickFreeSubnet(conf: NetConf, family: Family, taken: Iterable<string>, random: () => number = Math.random): string | null {
  const free = freeSubnets(conf, family, taken);
  if (free.length === 0) return null;
  return free[Math.min(free.length - 1, Math.floor(random() * free.length))] ?? null;
}

/** What acquire should do: write `subnet` (+ `ipv6Subnet`), replacing `existing` if set, and delete `stale` leases of this node. */
export interface AcquirePlan {
  subnet: string;
  /** Set exactly when the net-conf enables IPv6. */
  ipv6Subnet?: string;
  /** A lease under the same key (same subnets) that may be overwritten. */
  existing: Lease | undefined;
  stale: Lease[];
}

/**
 * flannel's order of preference for a node's lease: (1) a lease already carrying this PublicIP,
 * if it fits the config on both families (other leases of this PublicIP are stale and go); (2) the
 * preferred subnet (from the old subnet.env) when nobody live holds it; (3) a random free one.
 * With IPv6 the IPv6 subnet follows the same rules on its own: the preferred one when free, else a
 * random free one (flannel takes the old IPv6 subnet only together with the old IPv4 one, and
 * without checking that it is free). An own lease that fits only on the IPv4 side is replaced by
 * one with the same IPv4 subnet, so enabling IPv6 keeps each node's IPv4 subnet (flannel would
 * allocate a new one unless subnet.env names it).
 * `isLive` says whether a lease still counts (file store: not expired). Returns null when full.
 */
export function planAcquire(conf: NetConf, all: Iterable<Lease>, opts: AcquireOptions, isLive: (l: Lease) => boolean, random: () => number = Math.random): AcquirePlan | null {
  if (!conf.enableIPv4) return planAcquireV6Only(conf, [...all], opts, isLive, random);
  const v6 = hasIPv6(conf);
  const leases = [...all];
  const mine = leases.filter((l) => l.publicIp === opts.publicIp);
  const fits = (l: Lease): boolean => isSubnetCompatible(conf, 4, l.subnet) && (v6 ? isSubnetCompatible(conf, 6, l.ipv6Subnet) : l.ipv6Subnet === undefined);
  const keep = mine.find(fits);
  const stale = mine.filter((l) => l !== keep);
  if (keep) return { subnet: keep.subnet, ...(keep.ipv6Subnet !== undefined ? { ipv6Subnet: keep.ipv6Subnet } : {}), existing: keep, stale };
  const others = leases.filter((l) => !stale.includes(l));
  const holder = (subnet: string): Lease | undefined => others.find((l) => l.subnet === subnet);
  let subnet: string | null = null;
  // An own lease that fits only on the IPv4 side (IPv6 just enabled or disabled) still names the subnet to keep.
  const pref = opts.preferredSubnet ?? mine.find((l) => isSubnetCompatible(conf, 4, l.subnet))?.subnet;
  if (pref !== undefined && isSubnetCompatible(conf, 4, pref)) {
    const h = holder(pref);
    if (!h || !isLive(h)) subnet = pref;
  }
  const live = others.filter(isLive);
  subnet ??= pickFreeSubnet(conf, 4, live.map((l) => l.subnet), random);
  if (subnet === null) return null;
  let ipv6Subnet: string | undefined;
  if (v6) {
    const taken6 = live.flatMap((l) => (l.ipv6Subnet !== undefined ? [l.ipv6Subnet] : []));
    const pref6 = opts.preferredIpv6Subnet;
    ipv6Subnet = pref6 !== undefined && isSubnetCompatible(conf, 6, pref6) && !taken6.some((t) => overlaps(t, pref6))
      ? pref6
      : pickFreeSubnet(conf, 6, taken6, random) ?? undefined;
    if (ipv6Subnet === undefined) return null;
  }
  // A dead lease in the way is overwritten when its key is the new key, else deleted.
  const h = holder(subnet);
  const sameKey = h !== undefined && h.ipv6Subnet === ipv6Subnet;
  return { subnet, ...(ipv6Subnet !== undefined ? { ipv6Subnet } : {}), existing: sameKey ? h : undefined, stale: h && !sameKey ? [...stale, h] : stale };
}

/**
 * IPv6-only (EnableIPv4 false): the same preference on the IPv6 side alone, this node's leases told
 * by their PublicIPv6 (every IPv6-only lease has PublicIP 0.0.0.0). The IPv4 side is flannel's zero
 * subnet, so the key is "0.0.0.0-0&<IPv6 subnet>" as flanneld writes it.
 */
function planAcquireV6Only(conf: NetConf, leases: Lease[], opts: AcquireOptions, isLive: (l: Lease) => boolean, random: () => number): AcquirePlan | null {
  const mine = leases.filter((l) => opts.publicIpv6 !== undefined && l.publicIpv6 === opts.publicIpv6);
  const keep = mine.find((l) => isIpv6Only(l) && isSubnetCompatible(conf, 6, l.ipv6Subnet));
  const stale = mine.filter((l) => l !== keep);
  if (keep) return { subnet: NO_IPV4_SUBNET, ipv6Subnet: keep.ipv6Subnet as string, existing: keep, stale };
  const others = leases.filter((l) => !stale.includes(l));
  const live = others.filter(isLive);
  const taken6 = live.flatMap((l) => (l.ipv6Subnet !== undefined ? [l.ipv6Subnet] : []));
  const pref6 = opts.preferredIpv6Subnet ?? mine.find((l) => isSubnetCompatible(conf, 6, l.ipv6Subnet))?.ipv6Subnet;
  const ipv6Subnet = pref6 !== undefined && isSubnetCompatible(conf, 6, pref6) && !taken6.some((t) => overlaps(t, pref6))
    ? pref6
    : pickFreeSubnet(conf, 6, taken6, random);
  if (ipv6Subnet === null) return null;
  // A dead lease under the same key is overwritten; any other dead one holding the subnet goes.
  const dead = others.filter((l) => !isLive(l) && l.ipv6Subnet !== undefined && overlaps(l.ipv6Subnet, ipv6Subnet));
  const existing = dead.find((l) => isIpv6Only(l) && l.ipv6Subnet === ipv6Subnet);
  return { subnet: NO_IPV4_SUBNET, ipv6Subnet, existing, stale: [...stale, ...dead.filter((l) => l !== existing)] };
}

function overlaps(a: string, b: string): boolean {
  const ca = parseCidr(a);
  const cb = parseCidr(b);
  return ca !== null && cb !== null && cidrOverlaps(ca, cb);
}

/** IPv6 (dual stack or IPv6-only) needs the node's IPv6 address; throws saying so. */
export function checkAcquireFamilies(conf: NetConf, opts: AcquireOptions): void {
  if (hasIPv6(conf) && (opts.publicIpv6 === undefined || opts.publicIpv6 === '')) {
    throw new Error('net-conf: EnableIPv6 needs the node\'s IPv6 address (--public-ipv6, or an IPv6 address on the uplink)');
  }
}

/** The lease a plan writes for `opts`: the IPv6 attributes only when the plan has an IPv6 subnet. */
export function leaseFromPlan(plan: AcquirePlan, opts: AcquireOptions, expiration: number): Lease {
  const lease: Lease = { subnet: plan.subnet, publicIp: plan.subnet === NO_IPV4_SUBNET ? NO_IPV4_ADDRESS : opts.publicIp, backendType: opts.backendType, backendData: { ...opts.backendData }, expiration };
  if (plan.ipv6Subnet !== undefined) {
    lease.ipv6Subnet = plan.ipv6Subnet;
    if (opts.publicIpv6 !== undefined) lease.publicIpv6 = opts.publicIpv6;
    if (opts.backendV6Data !== undefined) lease.backendV6Data = { ...opts.backendV6Data };
  }
  return lease;
}

// Subnet choice for a new lease, as flannel does it: the free /SubnetLen subnets from SubnetMin
// upwards (at most 100 of them) are candidates and one is picked at random, so that nodes
// starting together rarely race for the same one; the store's exclusive create settles the rest.
import { type Cidr4, formatCidr4, overlapsCidr4, parseCidr4, parseIPv4, prefixSize } from '../../lib/ip/ipv4.ts';
import type { NetConf } from '../config/net-conf.ts';
import type { AcquireOptions, Lease } from './store.ts';

/** Candidate window size, as in flannel's allocateSubnet. */
export const MAX_CANDIDATES = 100;

/** True when `subnet` is a lease this config could have handed out (right length, within SubnetMin..SubnetMax). */
export function isSubnetCompatible(conf: NetConf, subnet: string): boolean {
  const c = parseCidr4(subnet);
  if (c === null || c.prefix !== conf.subnetLen) return false;
  return c.ip >= (parseIPv4(conf.subnetMin) ?? Infinity) && c.ip <= (parseIPv4(conf.subnetMax) ?? -1);
}

/** The first free subnets (up to `limit`) between SubnetMin and SubnetMax that overlap none of `taken`. */
export function freeSubnets(conf: NetConf, taken: Iterable<string>, limit = MAX_CANDIDATES): string[] {
  const used: Cidr4[] = [];
  for (const t of taken) {
    const c = parseCidr4(t);
    if (c !== null) used.push(c);
  }
  used.sort((a, b) => a.ip - b.ip);
  const size = prefixSize(conf.subnetLen);
  const max = parseIPv4(conf.subnetMax) ?? -1;
  const out: string[] = [];
  let u = 0; // index into the sorted `used`: every entry before it ends below the current candidate
  for (let ip = parseIPv4(conf.subnetMin) ?? Infinity; ip <= max && out.length < limit; ip += size) {
    const cand = { ip, prefix: conf.subnetLen };
    while (u < used.length && (used[u] as Cidr4).ip + prefixSize((used[u] as Cidr4).prefix) <= ip) u++;
    let clash = false;
    for (let i = u; i < used.length && (used[i] as Cidr4).ip <= ip + size - 1; i++) {
      if (overlapsCidr4(cand, used[i] as Cidr4)) { clash = true; break; }
    }
    if (!clash) out.push(formatCidr4(cand));
  }
  return out;
}

/** A random free subnet, or null when none is left. `random` returns [0,1) (injectable for tests). */
export function pickFreeSubnet(conf: NetConf, taken: Iterable<string>, random: () => number = Math.random): string | null {
  const free = freeSubnets(conf, taken);
  if (free.length === 0) return null;
  return free[Math.min(free.length - 1, Math.floor(random() * free.length))] ?? null;
}

/** What acquire should do: write `subnet` (replacing `existing` if set) and delete `stale` leases of this node. */
export interface AcquirePlan {
  subnet: string;
  existing: Lease | undefined;
  stale: Lease[];
}

/**
 * flannel's order of preference for a node's lease: (1) a lease already carrying this PublicIP,
 * if it fits the config (other leases of this PublicIP are stale and go); (2) the preferred
 * subnet (from the old subnet.env) when nobody live holds it; (3) a random free one.
 * `isLive` says whether a lease still counts (file store: not expired). Returns null when full.
 */
export function planAcquire(conf: NetConf, all: Iterable<Lease>, opts: AcquireOptions, isLive: (l: Lease) => boolean, random: () => number = Math.random): AcquirePlan | null {
  const leases = [...all];
  const mine = leases.filter((l) => l.publicIp === opts.publicIp);
  const keep = mine.find((l) => isSubnetCompatible(conf, l.subnet));
  const stale = mine.filter((l) => l !== keep);
  if (keep) return { subnet: keep.subnet, existing: keep, stale };
  const holder = (subnet: string): Lease | undefined => leases.find((l) => l.subnet === subnet);
  const pref = opts.preferredSubnet;
  if (pref !== undefined && isSubnetCompatible(conf, pref)) {
    const h = holder(pref);
    if (!h || !isLive(h)) return { subnet: pref, existing: h, stale };
  }
  const taken = leases.filter((l) => isLive(l) && !stale.includes(l)).map((l) => l.subnet);
  const subnet = pickFreeSubnet(conf, taken, random);
  if (subnet === null) return null;
  return { subnet, existing: holder(subnet), stale };
}

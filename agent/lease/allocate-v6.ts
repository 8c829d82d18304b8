// IPv6 subnet choice for a dual-stack lease, flannel's allocateSubnet for the IPv6 side: the first
// 100 free /IPv6SubnetLen subnets from IPv6SubnetMin upwards are candidates, one is picked at random.
import { type Cidr, cidrOverlaps, formatCidr, lastOf, parseCidr, parseIp } from '../../lib/ip/index.ts';
import type { NetConf } from '../config/net-conf.ts';
import { MAX_CANDIDATES } from './allocate.ts';

/** True when `subnet` is an IPv6 lease this config could have handed out (right length, within IPv6SubnetMin..Max). */
export function isIpv6SubnetCompatible(conf: NetConf, subnet: string | undefined): boolean {
  if (subnet === undefined || conf.ipv6SubnetLen === undefined) return false;
  const c = parseCidr(subnet);
  const min = parseIp(conf.ipv6SubnetMin ?? '');
  const max = parseIp(conf.ipv6SubnetMax ?? '');
  if (c === null || min === null || max === null || c.addr.family !== 6 || c.prefix !== conf.ipv6SubnetLen) return false;
  return c.addr.value >= min.value && c.addr.value <= max.value;
}

/** The first free IPv6 subnets (up to `limit`) between IPv6SubnetMin and IPv6SubnetMax that overlap none of `taken`. */
export function freeIpv6Subnets(conf: NetConf, taken: Iterable<string>, limit = MAX_CANDIDATES): string[] {
  const len = conf.ipv6SubnetLen;
  const min = parseIp(conf.ipv6SubnetMin ?? '');
  const max = parseIp(conf.ipv6SubnetMax ?? '');
  if (len === undefined || min === null || max === null) return [];
  const used: Cidr[] = [];
  for (const t of taken) {
    const c = parseCidr(t);
    if (c !== null && c.addr.family === 6) used.push(c);
  }
  used.sort((a, b) => (a.addr.value < b.addr.value ? -1 : a.addr.value > b.addr.value ? 1 : 0));
  const size = 1n << BigInt(128 - len);
  const out: string[] = [];
  let u = 0; // every entry of `used` before u ends below the current candidate
  for (let v = min.value; v <= max.value && out.length < limit; v += size) {
    const cand: Cidr = { addr: { family: 6, value: v }, prefix: len };
    while (u < used.length && lastOf(used[u] as Cidr).value < v) u++;
    let clash = false;
    for (let i = u; i < used.length && (used[i] as Cidr).addr.value <= v + size - 1n; i++) {
      if (cidrOverlaps(cand, used[i] as Cidr)) { clash = true; break; }
    }
    if (!clash) out.push(formatCidr(cand));
  }
  return out;
}

/** A random free IPv6 subnet, or null when none is left. `random` returns [0,1). */
export function pickFreeIpv6Subnet(conf: NetConf, taken: Iterable<string>, random: () => number = Math.random): string | null {
  const free = freeIpv6Subnets(conf, taken);
  if (free.length === 0) return null;
  return free[Math.min(free.length - 1, Math.floor(random() * free.length))] ?? null;
}

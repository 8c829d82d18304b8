// CIDR prefixes (address + prefix length): parse/format like Go's net.ParseCIDR / IPNet.String,
// masks, network and last address, containment and overlap.
import type { Family, IpAddr } from './addr.ts';
import { familyBits, formatIp, maxValue, parseIp } from './addr.ts';
import { parseDigits } from '../text/digits.ts';

/** An address with a prefix length; `addr` may have host bits set (see hasHostBits). */
export interface Cidr {
  readonly addr: IpAddr;
  readonly prefix: number;
}

/** The netmask of a prefix length as an integer of the family's width. */
export function maskValue(family: Family, prefix: number): bigint {
  const bits = BigInt(familyBits(family));
  return maxValue(family) ^ ((1n << (bits - BigInt(prefix))) - 1n);
}

/**
 * Parses "a.b.c.d/n" or "x::y/n" like Go's net.ParseCIDR, but keeps the address as written
 * (host bits included) so callers can tell "10.1.2.5/24" from "10.1.2.0/24". Null when invalid.
 */
export function parseCidr(s: string): Cidr | null {
  const slash = s.indexOf('/');
  if (slash < 0) return null;
  const addr = parseIp(s.slice(0, slash));
  const p = s.slice(slash + 1);
  const prefix = parseDigits(p, 3, false);
  if (addr === null || prefix === null || prefix > familyBits(addr.family)) return null;
  return { addr, prefix };
}

/** "addr/prefix" with the address formatted as given (IPNet.String would mask it; see networkOf). */
export function formatCidr(c: Cidr): string {
  return `${formatIp(c.addr)}/${c.prefix}`;
}

/** The network address (host bits cleared). */
export function networkOf(c: Cidr): IpAddr {
  return { family: c.addr.family, value: c.addr.value & maskValue(c.addr.family, c.prefix) };
}

/** The last address of the prefix (the IPv4 broadcast address). */
export function lastOf(c: Cidr): IpAddr {
  const hostMask = maxValue(c.addr.family) ^ maskValue(c.addr.family, c.prefix);
  return { family: c.addr.family, value: c.addr.value | hostMask };
}

/** The same prefix with host bits cleared. */
export function canonicalCidr(c: Cidr): Cidr {
  return { addr: networkOf(c), prefix: c.prefix };
}

/** True when the address part has bits set beyond the prefix. */
export function hasHostBits(c: Cidr): boolean {
  return networkOf(c).value !== c.addr.value;
}

/** True when `a` lies inside the prefix (same family only). */
export function cidrContains(c: Cidr, a: IpAddr): boolean {
  if (a.family !== c.addr.family) return false;
  const m = maskValue(c.addr.family, c.prefix);
  return (a.value & m) === (c.addr.value & m);
}

/** True when two prefixes share at least one address. */
export function cidrOverlaps(a: Cidr, b: Cidr): boolean {
  if (a.addr.family !== b.addr.family) return false;
  return cidrContains(a, b.addr) || cidrContains(b, a.addr);
}

/** Number of addresses in the prefix (2^(bits - prefix)). */
export function cidrSize(c: Cidr): bigint {
  return 1n << BigInt(familyBits(c.addr.family) - c.prefix);
}

/** "10.1.2.3/24" -> "10.1.2.0/24": the subnet of an address in CIDR form (host bits cleared); throws on malformed text. */
export function subnetOf(cidr: string): string {
  const c = parseCidr(cidr);
  if (c === null) throw new RangeError(`not an address/prefix: ${JSON.stringify(cidr)}`);
  return formatCidr(canonicalCidr(c));
}

/** The IPv4 broadcast of "a.b.c.d/n"; none for IPv6 and for /31 and /32 (RFC 3021), as the reference's netlink library computes it. */
export function broadcastOf(cidr: string): string | undefined {
  const c = parseCidr(cidr);
  if (c === null || c.addr.family !== 4 || c.prefix >= 31) return undefined;
  return formatIp(lastOf(c));
}

// IPv4 prefixes as plain numbers (an IPv4 address fits a double exactly), for the IPv4-only flannel
// contract and weftd (leases, routes, the udp forwarder's peer table), where arithmetic on numbers
// is simpler than on bigint. Text is parsed by addr.ts, so there is one address parser in the project.
import { parseIp } from './addr.ts';
import { parseDigits } from '../text/digits.ts';

/** An IPv4 prefix: `ip` is the network address as an unsigned 32-bit number. */
export interface Cidr4 {
  ip: number;
  prefix: number;
}

/** Parses a dotted-quad IPv4 address to an unsigned number; null when it is not one (leading zeros are refused, as Go's net.ParseIP does, since some tools read them as octal). */
export function parseIPv4(s: string): number | null {
  const a = parseIp(s);
  return a !== null && a.family === 4 ? Number(a.value) : null;
}

/** Formats an unsigned 32-bit number as a dotted quad. */
export function formatIPv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** Number of addresses in a prefix of length `prefix` (2^(32-prefix)). */
export function prefixSize(prefix: number): number {
  return 2 ** (32 - prefix);
}

/** The network address of `ip` under a prefix length (host bits cleared). */
export function maskIPv4(ip: number, prefix: number): number {
  const size = prefixSize(prefix);
  return ip - (ip % size);
}

/** Parses "a.b.c.d/len"; returns the address as written (host bits kept) and the length, or null when malformed. */
export function parseCidr4Loose(s: string): Cidr4 | null {
  const slash = s.indexOf('/');
  if (slash < 0) return null;
  const ip = parseIPv4(s.slice(0, slash));
  const lenText = s.slice(slash + 1);
  const prefix = parseDigits(lenText, 2, false);
  if (ip === null || prefix === null || prefix > 32) return null;
  return { ip, prefix };
}

/** Parses "a.b.c.d/len" whose host bits are all zero (a network, not an address); null otherwise. */
export function parseCidr4(s: string): Cidr4 | null {
  const c = parseCidr4Loose(s);
  if (c === null || maskIPv4(c.ip, c.prefix) !== c.ip) return null;
  return c;
}

/** Formats a prefix as "a.b.c.d/len". */
export function formatCidr4(c: Cidr4): string {
  return `${formatIPv4(c.ip)}/${c.prefix}`;
}

/** Last address of a prefix (the broadcast address for IPv4 subnets wider than /31). */
export function lastIPv4(c: Cidr4): number {
  return c.ip + prefixSize(c.prefix) - 1;
}

/** True when `ip` lies inside `c`. */
export function containsIPv4(c: Cidr4, ip: number): boolean {
  return ip >= c.ip && ip <= lastIPv4(c);
}

/** True when the two prefixes share at least one address. */
export function overlapsCidr4(a: Cidr4, b: Cidr4): boolean {
  return a.ip <= lastIPv4(b) && b.ip <= lastIPv4(a);
}

// IPv4/IPv6 address, CIDR and MAC string <-> byte codecs for netlink attributes. Text parsing is
// lib/ip's (dependency-free: ip-address costs start-up time we do not have); this adds the wire form.
import { familyOfText, parseIp } from '../ip/addr.ts';
import { parseDigits } from '../text/digits.ts';

/** An IP prefix in wire form: `bytes` is 4 (IPv4) or 16 (IPv6) bytes, `prefix` the prefix length. */
export interface Prefix {
  family: 4 | 6;
  bytes: Uint8Array;
  prefix: number;
}

/**
 * Parses an IPv4 or IPv6 address string into 4 or 16 bytes; throws naming the bad value. The text
 * rules are lib/ip's (Go's net.ParseIP), so every layer accepts exactly the same addresses.
 */
export function parseIP(s: string): Uint8Array {
  const a = s.includes('%') ? null : parseIp(s); // zone ids have no wire form in these messages
  if (a === null) throw new TypeError(`invalid IP address: ${JSON.stringify(s)}`);
  const out = new Uint8Array(a.family === 4 ? 4 : 16);
  let v = a.value;
  for (let i = out.length - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

/** Formats 4 or 16 address bytes as a string (IPv6 in RFC 5952 canonical form). */
export function formatIP(b: Uint8Array): string {
  // A template, not Array.from().join(): dumps format one per entry, thousands per pass.
  if (b.length === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  if (b.length !== 16) throw new TypeError(`address must be 4 or 16 bytes, got ${b.length}`);
  const g: number[] = [];
  for (let i = 0; i < 8; i++) g.push(((b[2 * i] ?? 0) << 8) | (b[2 * i + 1] ?? 0));
  // RFC 5952 4.2: compress the longest run of two or more zero groups, the first on a tie.
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) { bestStart = i; bestLen = j - i; }
    i = j;
  }
  const hex = (xs: number[]): string => xs.map((x) => x.toString(16)).join(':');
  if (bestStart < 0) return hex(g);
  return `${hex(g.slice(0, bestStart))}::${hex(g.slice(bestStart + bestLen))}`;
}

/** Address family of an IP string (4 or 6). */
export const ipFamily = familyOfText;

/** Parses "addr/len" (a bare address means a host prefix) into wire form; throws naming the bad value. */
export function parseCidr(s: string): Prefix {
  const slash = s.indexOf('/');
  const bytes = parseIP(slash < 0 ? s : s.slice(0, slash));
  const max = bytes.length * 8;
  let prefix = max;
  if (slash >= 0) {
    const p = s.slice(slash + 1);
    const n = parseDigits(p, 3);
    if (n === null || n > max) throw new TypeError(`invalid CIDR prefix: ${JSON.stringify(s)}`);
    prefix = n;
  }
  return { family: bytes.length === 4 ? 4 : 6, bytes, prefix };
}

/** Formats address bytes and a prefix length as "addr/len". */
export function formatCidr(bytes: Uint8Array, prefix: number): string {
  return `${formatIP(bytes)}/${prefix}`;
}

/** Parses "aa:bb:cc:dd:ee:ff" (any case, also '-' separated) into 6 bytes; throws naming the bad value. */
export function parseMac(s: string): Uint8Array {
  const parts = s.split(/[:-]/);
  if (parts.length !== 6 || !parts.every((p) => /^[0-9a-fA-F]{2}$/.test(p))) {
    throw new TypeError(`invalid MAC address: ${JSON.stringify(s)}`);
  }
  return Uint8Array.from(parts.map((p) => parseInt(p, 16)));
}

/** Two lowercase hex digits per byte value. */
const HEX2 = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Formats link-layer address bytes as lowercase colon-separated hex ("" for none). */
export function formatMac(b: Uint8Array): string {
  if (b.length === 6) return `${HEX2[b[0] ?? 0]}:${HEX2[b[1] ?? 0]}:${HEX2[b[2] ?? 0]}:${HEX2[b[3] ?? 0]}:${HEX2[b[4] ?? 0]}:${HEX2[b[5] ?? 0]}`;
  let s = '';
  for (let i = 0; i < b.length; i++) s += (i > 0 ? ':' : '') + (HEX2[b[i] ?? 0] ?? '');
  return s;
}

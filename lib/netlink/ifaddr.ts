// Address messages: struct ifaddrmsg plus IFA_* attributes (linux/if_addr.h), parsed into `Addr`
// and formatted for RTM_NEWADDR / RTM_DELADDR.
import { formatCidr, formatIP, parseCidr, parseIP } from './addr.ts';
import { LE, attrMap, attrU32, concat, formatAttr, getStr, getU32, parseAttrs, rawExtras, view } from './attrs.ts';
import { AF_INET, AF_INET6 } from './constants.ts';

export const IFA_ADDRESS = 1;
export const IFA_LOCAL = 2;
export const IFA_LABEL = 3;
export const IFA_BROADCAST = 4;
/** u32 flags; supersedes the 8-bit ifa_flags (linux/if_addr.h). */
export const IFA_FLAGS = 8;

/** ifa_flags bits (linux/if_addr.h). */
export const IFA_F_NODAD = 0x02;
export const IFA_F_TENTATIVE = 0x40;
export const IFA_F_PERMANENT = 0x80;
export const IFA_F_DADFAILED = 0x08;

/** sizeof(struct ifaddrmsg): u8 family, u8 prefixlen, u8 flags, u8 scope, u32 index. */
export const IFADDRMSG_LEN = 8;

/** An interface address. */
export interface Addr {
  index: number;
  family: 4 | 6;
  /** "10.0.0.2/24": the local address with the prefix length. */
  cidr: string;
  address: string;
  prefix: number;
  /** RT_SCOPE_* (0 universe, 253 link, 254 host). */
  scope: number;
  /** IFA_F_* (from IFA_FLAGS when present, which holds all 32 bits). */
  flags: number;
  label?: string;
  broadcast?: string;
  /** IFA_ADDRESS when it differs from IFA_LOCAL (the peer of a point-to-point address). */
  peer?: string;
  extra: Array<{ type: number; data: Uint8Array }>;
}

const KNOWN = new Set([IFA_ADDRESS, IFA_LOCAL, IFA_LABEL, IFA_BROADCAST, IFA_FLAGS]);

/** Formats struct ifaddrmsg followed by attributes. */
export function formatIfaddr(h: { family: number; prefix?: number; flags?: number; scope?: number; index: number }, attrs: readonly Uint8Array[] = []): Uint8Array {
  const hdr = new Uint8Array(IFADDRMSG_LEN);
  const dv = view(hdr);
  dv.setUint8(0, h.family);
  dv.setUint8(1, h.prefix ?? 0);
  dv.setUint8(2, (h.flags ?? 0) & 0xff);
  dv.setUint8(3, h.scope ?? 0);
  dv.setUint32(4, h.index, LE);
  return concat([hdr, ...attrs]);
}

/** Formats the payload of an RTM_NEWADDR / RTM_DELADDR for `cidr` on link `index`. */
export function formatAddrRequest(o: { index: number; cidr: string; noDad?: boolean; broadcast?: string; scope?: number }): Uint8Array {
  const p = parseCidr(o.cidr);
  const flags = o.noDad ? IFA_F_NODAD : 0;
  // IFA_LOCAL is the address itself; IFA_ADDRESS equal to it means "no peer" (as iproute2 sends it).
  const attrs = [formatAttr(IFA_LOCAL, p.bytes), formatAttr(IFA_ADDRESS, p.bytes)];
  if (o.broadcast !== undefined) attrs.push(formatAttr(IFA_BROADCAST, parseIP(o.broadcast)));
  // ifa_flags holds the low 8 bits; IFA_FLAGS is only needed for the bits above (iproute2 does the same).
  if (flags > 0xff) attrs.push(attrU32(IFA_FLAGS, flags));
  return formatIfaddr({ family: p.family === 4 ? AF_INET : AF_INET6, prefix: p.prefix, flags, scope: o.scope ?? 0, index: o.index }, attrs);
}

/** Parses an RTM_NEWADDR / RTM_DELADDR payload; returns null for families other than IPv4/IPv6. */
export function parseAddr(payload: Uint8Array): Addr | null {
  if (payload.length < IFADDRMSG_LEN) throw new RangeError(`ifaddrmsg too short: ${payload.length} bytes`);
  const dv = view(payload);
  const af = dv.getUint8(0);
  if (af !== AF_INET && af !== AF_INET6) return null;
  const attrs = parseAttrs(payload.subarray(IFADDRMSG_LEN));
  const m = attrMap(attrs);
  const local = m.get(IFA_LOCAL);
  const address = m.get(IFA_ADDRESS);
  const main = local ?? address;
  const prefix = dv.getUint8(1);
  const ip = main ? formatIP(main.data) : '';
  const flagsAttr = m.get(IFA_FLAGS);
  const a: Addr = {
    index: dv.getUint32(4, LE),
    family: af === AF_INET ? 4 : 6,
    cidr: main ? formatCidr(main.data, prefix) : '',
    address: ip,
    prefix,
    scope: dv.getUint8(3),
    flags: flagsAttr ? getU32(flagsAttr) : dv.getUint8(2),
    extra: rawExtras(attrs, KNOWN),
  };
  const label = m.get(IFA_LABEL);
  if (label) a.label = getStr(label);
  const brd = m.get(IFA_BROADCAST);
  if (brd) a.broadcast = formatIP(brd.data);
  if (local && address && formatIP(address.data) !== ip) a.peer = formatIP(address.data);
  return a;
}

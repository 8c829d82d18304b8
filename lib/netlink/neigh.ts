// Neighbour messages: struct ndmsg plus NDA_* attributes (linux/neighbour.h), parsed into `Neigh`
// and formatted for RTM_NEWNEIGH / RTM_DELNEIGH on the IPv4 ARP and IPv6 ND tables.
import { formatIP, formatMac, ipFamily, parseIP, parseMac } from './addr.ts';
import { LE, attrMap, concat, formatAttr, parseAttrs, rawExtras, view } from './attrs.ts';
import { AF_INET, AF_INET6, afOf } from './constants.ts';

export const NDA_DST = 1;
export const NDA_LLADDR = 2;
export const NDA_VLAN = 5;
/** Remote VXLAN UDP port, a __be16. */
export const NDA_PORT = 6;
export const NDA_VNI = 7;
export const NDA_IFINDEX = 8;
export const NDA_MASTER = 9;

/** ndm_state bits (linux/neighbour.h NUD_*). */
export const NUD_REACHABLE = 0x02;
export const NUD_STALE = 0x04;
export const NUD_NOARP = 0x40;
export const NUD_PERMANENT = 0x80;

/** ndm_flags bits (linux/neighbour.h NTF_*): SELF addresses the device's own table (vxlan), MASTER the bridge's. */
export const NTF_SELF = 0x02;
export const NTF_MASTER = 0x04;

/** sizeof(struct ndmsg): u8 family, u8 pad1, u16 pad2, s32 ifindex, u16 state, u8 flags, u8 type. */
export const NDMSG_LEN = 12;

/** An ARP / ND neighbour entry. */
export interface Neigh {
  family: 4 | 6;
  index: number;
  ip: string;
  /** Link-layer address; absent for incomplete/failed entries. */
  mac?: string;
  /** NUD_* bits. */
  state: number;
  permanent: boolean;
  /** NTF_* bits. */
  flags: number;
  extra: Array<{ type: number; data: Uint8Array }>;
}

/** Decoded struct ndmsg header. */
export interface NdmsgHeader {
  family: number;
  index: number;
  state: number;
  flags: number;
  type: number;
}

/** Formats struct ndmsg followed by attributes. */
export function formatNdmsg(h: { family: number; index?: number; state?: number; flags?: number; type?: number }, attrs: readonly Uint8Array[] = []): Uint8Array {
  const hdr = new Uint8Array(NDMSG_LEN);
  const dv = view(hdr);
  dv.setUint8(0, h.family);
  dv.setInt32(4, h.index ?? 0, LE);
  dv.setUint16(8, h.state ?? 0, LE);
  dv.setUint8(10, h.flags ?? 0);
  dv.setUint8(11, h.type ?? 0);
  return concat([hdr, ...attrs]);
}

/** Parses struct ndmsg; throws on a short payload. */
export function parseNdmsg(payload: Uint8Array): NdmsgHeader {
  if (payload.length < NDMSG_LEN) throw new RangeError(`ndmsg too short: ${payload.length} bytes`);
  const dv = view(payload);
  return { family: dv.getUint8(0), index: dv.getInt32(4, LE), state: dv.getUint16(8, LE), flags: dv.getUint8(10), type: dv.getUint8(11) };
}

/** The ifindex of a struct ndmsg payload without decoding the rest (-1 when too short): dumps filter on it first. */
export function ndmsgIndex(payload: Uint8Array): number {
  return payload.length < NDMSG_LEN ? -1 : view(payload).getInt32(4, LE);
}

/** Formats an RTM_NEWNEIGH payload (mac given) or RTM_DELNEIGH payload (mac omitted) for an IP neighbour. */
export function formatNeighRequest(o: { index: number; ip: string; mac?: string; permanent?: boolean }): Uint8Array {
  const attrs = [formatAttr(NDA_DST, parseIP(o.ip))];
  if (o.mac !== undefined) attrs.push(formatAttr(NDA_LLADDR, parseMac(o.mac)));
  const state = o.mac === undefined ? 0 : o.permanent ? NUD_PERMANENT : NUD_REACHABLE;
  return formatNdmsg({ family: afOf(ipFamily(o.ip)), index: o.index, state }, attrs);
}

const KNOWN = new Set([NDA_DST, NDA_LLADDR]);

/** Parses an RTM_NEWNEIGH / RTM_DELNEIGH payload; null for families other than IPv4/IPv6 (e.g. AF_BRIDGE). */
export function parseNeigh(payload: Uint8Array): Neigh | null {
  const h = parseNdmsg(payload);
  if (h.family !== AF_INET && h.family !== AF_INET6) return null;
  const attrs = parseAttrs(payload.subarray(NDMSG_LEN));
  const m = attrMap(attrs);
  const dst = m.get(NDA_DST);
  const n: Neigh = {
    family: h.family === AF_INET ? 4 : 6,
    index: h.index,
    ip: dst ? formatIP(dst.data) : '',
    state: h.state,
    permanent: (h.state & NUD_PERMANENT) !== 0,
    flags: h.flags,
    extra: rawExtras(attrs, KNOWN),
  };
  const ll = m.get(NDA_LLADDR);
  if (ll) n.mac = formatMac(ll.data);
  return n;
}

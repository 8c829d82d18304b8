// Traffic-control messages: struct tcmsg (linux/rtnetlink.h) plus TCA_* attributes, shared by
// qdiscs, classes and filters; per-kind options live in tc-tbf.ts, tc-htb.ts and tc-filter.ts.
import { LE, attrMap, attrNested, attrStr, concat, getStr, getU32, parseAttrs, view, type NlAttr } from './attrs.ts';

/** rtnetlink message types for tc (linux/rtnetlink.h). */
export const RTM_NEWQDISC = 36;
export const RTM_DELQDISC = 37;
export const RTM_GETQDISC = 38;
export const RTM_NEWTCLASS = 40;
export const RTM_DELTCLASS = 41;
export const RTM_GETTCLASS = 42;
export const RTM_NEWTFILTER = 44;
export const RTM_DELTFILTER = 45;
export const RTM_GETTFILTER = 46;

/** Top-level tc attributes (linux/rtnetlink.h enum TCA_*). */
export const TCA_KIND = 1;
export const TCA_OPTIONS = 2;

/** Special parents and handles (linux/pkt_sched.h). */
export const TC_H_ROOT = 0xffffffff;
export const TC_H_INGRESS = 0xfffffff1;
/** The handle `ffff:` every ingress qdisc has. */
export const TC_H_INGRESS_QDISC = 0xffff0000;

/** Ethernet protocol numbers a filter can select (linux/if_ether.h). */
export const ETH_P_ALL = 0x0003;
export const ETH_P_IP = 0x0800;
export const ETH_P_IPV6 = 0x86dd;

/** sizeof(struct tcmsg): u8 family, u8 pad, u16 pad, s32 ifindex, u32 handle, u32 parent, u32 info. */
export const TCMSG_LEN = 20;

/** Builds a handle from major:minor (TC_H_MAKE). */
export function tcHandle(major: number, minor: number): number {
  return (((major & 0xffff) << 16) | (minor & 0xffff)) >>> 0;
}

/** "1:30" style text of a handle (hex, as tc prints it); "root" and "ingress" for the special parents. */
export function formatTcHandle(h: number): string {
  if (h === TC_H_ROOT) return 'root';
  if (h === TC_H_INGRESS) return 'ingress';
  return `${(h >>> 16).toString(16)}:${(h & 0xffff) === 0 ? '' : (h & 0xffff).toString(16)}`;
}

/** tcm_info of a filter: priority in the upper 16 bits, protocol (network byte order) in the lower. */
export function filterInfo(prio: number, protocol: number): number {
  const be = ((protocol & 0xff) << 8) | ((protocol >>> 8) & 0xff);
  return (((prio & 0xffff) << 16) | be) >>> 0;
}

/** The header fields of a tc message. */
export interface TcHeader {
  ifindex: number;
  handle: number;
  parent: number;
  /** Filters: filterInfo(prio, protocol); qdiscs and classes: 0. */
  info?: number;
}

/** Formats struct tcmsg followed by attributes. */
export function formatTcmsg(h: TcHeader, attrs: readonly Uint8Array[] = []): Uint8Array {
  const hdr = new Uint8Array(TCMSG_LEN);
  const dv = view(hdr);
  dv.setInt32(4, h.ifindex, LE);
  dv.setUint32(8, h.handle >>> 0, LE);
  dv.setUint32(12, h.parent >>> 0, LE);
  dv.setUint32(16, (h.info ?? 0) >>> 0, LE);
  return concat([hdr, ...attrs]);
}

/** TCA_KIND then TCA_OPTIONS { options } (omitted when `options` is undefined, as for ingress). */
export function formatKindOptions(kind: string, options?: readonly Uint8Array[]): Uint8Array[] {
  const out = [attrStr(TCA_KIND, kind)];
  if (options !== undefined) out.push(attrNested(TCA_OPTIONS, options));
  return out;
}

/** A qdisc, class or filter as the kernel dumps it; `options` are the raw TCA_OPTIONS children. */
export interface TcObject {
  ifindex: number;
  handle: number;
  parent: number;
  info: number;
  kind: string;
  options: NlAttr[];
}

/** Parses an RTM_NEW{QDISC,TCLASS,TFILTER} payload. */
export function parseTcObject(payload: Uint8Array): TcObject {
  if (payload.length < TCMSG_LEN) throw new RangeError(`tcmsg too short: ${payload.length} bytes`);
  const dv = view(payload);
  const m = attrMap(parseAttrs(payload.subarray(TCMSG_LEN)));
  const kind = m.get(TCA_KIND);
  const opts = m.get(TCA_OPTIONS);
  return {
    ifindex: dv.getInt32(4, LE),
    handle: dv.getUint32(8, LE),
    parent: dv.getUint32(12, LE),
    info: dv.getUint32(16, LE),
    kind: kind ? getStr(kind) : '',
    options: opts ? parseAttrs(opts.data) : [],
  };
}

/** Priority of a filter from its tcm_info. */
export function filterPrio(o: Pick<TcObject, 'info'>): number {
  return o.info >>> 16;
}

/** Protocol (host order) of a filter from its tcm_info. */
export function filterProtocol(o: Pick<TcObject, 'info'>): number {
  const be = o.info & 0xffff;
  return ((be & 0xff) << 8) | (be >>> 8);
}

/** A u32 option attribute's value, or undefined. */
export function optU32(opts: readonly NlAttr[], type: number): number | undefined {
  const a = opts.find((x) => x.type === type);
  return a && a.data.length >= 4 ? getU32(a) : undefined;
}

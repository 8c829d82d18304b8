// Route messages: struct rtmsg plus RTA_* attributes (linux/rtnetlink.h), parsed into `Route` and
// formatted for RTM_NEWROUTE / RTM_DELROUTE. Only single-nexthop routes are formatted.
import { formatCidr, formatIP, parseCidr, parseIP } from './addr.ts';
import { LE, attrMap, attrNested, attrU32, concat, formatAttr, getU32, parseAttrs, rawExtras, view } from './attrs.ts';
import { AF_INET, AF_INET6 } from './constants.ts';

export const RTA_DST = 1;
export const RTA_OIF = 4;
export const RTA_GATEWAY = 5;
export const RTA_PRIORITY = 6;
export const RTA_PREFSRC = 7;
export const RTA_METRICS = 8;
export const RTA_TABLE = 15;
/** Route metrics nested in RTA_METRICS (linux/rtnetlink.h RTAX_*). */
export const RTAX_MTU = 2;
export const RTAX_ADVMSS = 8;

export const RT_TABLE_MAIN = 254;
export const RTPROT_BOOT = 3;
export const RT_SCOPE_UNIVERSE = 0;
export const RT_SCOPE_LINK = 253;
export const RT_SCOPE_HOST = 254;
/** Wildcard scope on delete: the kernel's fib_table_delete matches any scope. */
export const RT_SCOPE_NOWHERE = 255;
export const RTN_UNICAST = 1;
/** The gateway is reachable on the interface even without a covering prefix (rtm_flags, RTNH_F_ONLINK). */
export const RTNH_F_ONLINK = 4;

/** sizeof(struct rtmsg): family, dst_len, src_len, tos, table, protocol, scope, type (u8 each), u32 flags. */
export const RTMSG_LEN = 12;

/** What a caller asks for when adding or deleting a route. */
export interface RouteSpec {
  /** CIDR; "0.0.0.0/0" or "::/0" for the default route. */
  dst: string;
  gw?: string;
  oif?: number;
  onlink?: boolean;
  scope?: number;
  table?: number;
  protocol?: number;
  priority?: number;
  mtu?: number;
  advmss?: number;
  src?: string;
  type?: number;
}

/** A route as the kernel reports it. */
export interface Route {
  family: 4 | 6;
  dst: string;
  gw?: string;
  oif?: number;
  onlink: boolean;
  scope: number;
  table: number;
  protocol: number;
  type: number;
  /** rtm_flags (RTNH_F_*, RTM_F_*). */
  flags: number;
  priority?: number;
  mtu?: number;
  advmss?: number;
  src?: string;
  extra: Array<{ type: number; data: Uint8Array }>;
}

const KNOWN = new Set([RTA_DST, RTA_OIF, RTA_GATEWAY, RTA_PRIORITY, RTA_PREFSRC, RTA_METRICS, RTA_TABLE]);

/** Formats struct rtmsg followed by attributes. */
export function formatRtmsg(h: { family: number; dstLen?: number; table?: number; protocol?: number; scope?: number; type?: number; flags?: number }, attrs: readonly Uint8Array[] = []): Uint8Array {
  const hdr = new Uint8Array(RTMSG_LEN);
  hdr.set([h.family, h.dstLen ?? 0, 0, 0, h.table ?? 0, h.protocol ?? 0, h.scope ?? 0, h.type ?? 0]);
  view(hdr).setUint32(8, (h.flags ?? 0) >>> 0, LE);
  return concat([hdr, ...attrs]);
}

/**
 * Formats an RTM_NEWROUTE (del false) or RTM_DELROUTE (del true) payload. On delete, unset
 * protocol/type/scope are wildcards (0, 0, RT_SCOPE_NOWHERE) so the kernel matches any value.
 */
export function formatRouteRequest(r: RouteSpec, del: boolean): Uint8Array {
  const dst = parseCidr(r.dst);
  const attrs: Uint8Array[] = [];
  if (dst.prefix > 0) attrs.push(formatAttr(RTA_DST, dst.bytes));
  if (r.gw !== undefined) {
    const gw = parseIP(r.gw);
    if (gw.length !== dst.bytes.length) throw new TypeError(`route gateway ${r.gw} is not in the family of ${r.dst}`);
    attrs.push(formatAttr(RTA_GATEWAY, gw));
  }
  if (r.oif !== undefined) attrs.push(attrU32(RTA_OIF, r.oif));
  if (r.priority !== undefined) attrs.push(attrU32(RTA_PRIORITY, r.priority));
  if (r.src !== undefined) attrs.push(formatAttr(RTA_PREFSRC, parseIP(r.src)));
  const metrics: Uint8Array[] = [];
  if (r.mtu !== undefined) metrics.push(attrU32(RTAX_MTU, r.mtu));
  if (r.advmss !== undefined) metrics.push(attrU32(RTAX_ADVMSS, r.advmss));
  if (metrics.length) attrs.push(attrNested(RTA_METRICS, metrics));
  const table = r.table ?? RT_TABLE_MAIN;
  // rtm_table is 8 bits; RTA_TABLE carries larger ids (and wins when present), as iproute2 sends it.
  if (table > 255) attrs.push(attrU32(RTA_TABLE, table));
  const type = r.type ?? (del ? 0 : RTN_UNICAST);
  // iproute2's default: an IPv4 unicast route without a gateway is a link-scope route.
  const addScope = dst.family === 4 && r.gw === undefined && type === RTN_UNICAST ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE;
  return formatRtmsg({
    family: dst.family === 4 ? AF_INET : AF_INET6,
    dstLen: dst.prefix,
    table: table < 256 ? table : 0,
    protocol: r.protocol ?? (del ? 0 : RTPROT_BOOT),
    scope: r.scope ?? (del ? RT_SCOPE_NOWHERE : addScope),
    type,
    flags: r.onlink ? RTNH_F_ONLINK : 0,
  }, attrs);
}

/** Parses an RTM_NEWROUTE / RTM_DELROUTE payload; null for families other than IPv4/IPv6 (e.g. multicast tables). */
export function parseRoute(payload: Uint8Array): Route | null {
  if (payload.length < RTMSG_LEN) throw new RangeError(`rtmsg too short: ${payload.length} bytes`);
  const af = payload[0];
  if (af !== AF_INET && af !== AF_INET6) return null;
  const family = af === AF_INET ? 4 : 6;
  const dstLen = payload[1] ?? 0;
  const flags = view(payload).getUint32(8, LE);
  const attrs = parseAttrs(payload.subarray(RTMSG_LEN));
  const m = attrMap(attrs);
  const dst = m.get(RTA_DST);
  const table = m.get(RTA_TABLE);
  const r: Route = {
    family,
    dst: dst ? formatCidr(dst.data, dstLen) : family === 4 ? '0.0.0.0/0' : '::/0',
    onlink: (flags & RTNH_F_ONLINK) !== 0,
    scope: payload[6] ?? 0,
    table: table ? getU32(table) : payload[4] ?? 0,
    protocol: payload[5] ?? 0,
    type: payload[7] ?? 0,
    flags,
    extra: rawExtras(attrs, KNOWN),
  };
  const gw = m.get(RTA_GATEWAY);
  if (gw) r.gw = formatIP(gw.data);
  const oif = m.get(RTA_OIF);
  if (oif) r.oif = getU32(oif);
  const prio = m.get(RTA_PRIORITY);
  if (prio) r.priority = getU32(prio);
  const src = m.get(RTA_PREFSRC);
  if (src) r.src = formatIP(src.data);
  const metrics = m.get(RTA_METRICS);
  if (metrics) {
    const mm = attrMap(parseAttrs(metrics.data));
    const mtu = mm.get(RTAX_MTU);
    if (mtu) r.mtu = getU32(mtu);
    const advmss = mm.get(RTAX_ADVMSS);
    if (advmss) r.advmss = getU32(advmss);
  }
  return r;
}

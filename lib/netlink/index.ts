// Public surface of weft's rtnetlink layer: verbs (Rtnl), notifications (RtnlEvents), errors and codecs.
export { Rtnl } from './rtnl.ts';
export { Tc, type TcFilterSpec, type TcSpec } from './tc.ts';
export { RtnlEvents, parseRtnlEvent, type RtnlEvent, type RtnlGroup } from './events.ts';
export { NetlinkError, isExists, isNotFound } from './errors.ts';
export type { Link } from './link.ts';
export type { VxlanInfo } from './link-kinds.ts';
export type { Addr } from './ifaddr.ts';
export type { Route, RouteSpec } from './route.ts';
export type { Neigh } from './neigh.ts';
export type { Fdb } from './fdb.ts';
export { formatCidr, formatIP, formatMac, parseCidr, parseIP, parseMac, type Prefix } from './addr.ts';
export * as nlconst from './constants.ts';

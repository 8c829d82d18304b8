// Public surface of weft's netlink layer: rtnetlink verbs (Rtnl), notifications (RtnlEvents), generic
// netlink (Genl) and its ethtool family (Ethtool), errors and codecs.
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
export { Genl, type GenlFamily } from './genl.ts';
export { Ethtool, TX_CHECKSUM_IP_GENERIC } from './ethtool.ts';

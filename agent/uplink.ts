// The node's uplink (the interface peers reach it through) and its public IP, in the node's netns:
// from --iface, or the interface holding --public-ip, or the one carrying the IPv4 default route.
import type { Addr, Link, Route, Rtnl } from '../lib/netlink/index.ts';

/** The resolved uplink. */
export interface Uplink {
  index: number;
  name: string;
  mtu: number;
  /** The address leases advertise (PublicIP). */
  publicIp: string;
  /** The uplink's own IPv4 address with its prefix ("192.0.2.11/24"); its subnet decides "same L2". */
  cidr: string;
  /** True when publicIp is an address of the uplink (host-gw requires it). */
  publicIpOnUplink: boolean;
}

/** What the flags ask for. */
export interface UplinkQuery {
  iface?: string;
  publicIp?: string;
}

/** Resolves the uplink from the node's netns; throws naming the flag when it cannot. */
export function findUplink(rtnl: Rtnl, q: UplinkQuery): Uplink {
  return chooseUplink(rtnl.listLinks(), rtnl.listAddrs({ family: 4 }), rtnl.listRoutes({ family: 4, table: 254 }), q);
}

/** The uplink among the given links, addresses and main-table routes (pure). */
export function chooseUplink(links: readonly Link[], allAddrs: readonly Addr[], routes: readonly Route[], q: UplinkQuery): Uplink {
  const addrs = allAddrs.filter((a) => a.family === 4 && a.scope === 0);
  let link: Link | undefined;
  if (q.iface !== undefined) {
    const want = q.iface;
    link = links.find((l) => l.name === want) ?? addrLink(links, addrs, want);
    if (!link) throw new Error(`--iface ${JSON.stringify(q.iface)}: no such interface or address`);
  } else if (q.publicIp !== undefined) {
    link = addrLink(links, addrs, q.publicIp) ?? defaultRouteLink(routes, links);
  } else {
    link = defaultRouteLink(routes, links) ?? links.find((l) => l.up && l.type !== 772 && addrs.some((a) => a.index === l.index));
  }
  if (!link) throw new Error('cannot find the uplink: no IPv4 default route and no --iface');
  const own = addrs.filter((a) => a.index === link.index);
  const first = own[0];
  if (!first) throw new Error(`uplink ${link.name} has no global IPv4 address`);
  const publicIp = q.publicIp ?? first.address;
  const match = own.find((a) => a.address === publicIp);
  return { index: link.index, name: link.name, mtu: link.mtu, publicIp, cidr: (match ?? first).cidr, publicIpOnUplink: match !== undefined };
}

/** The link holding address `ip`, if any. */
function addrLink(links: readonly Link[], addrs: readonly Addr[], ip: string): Link | undefined {
  const a = addrs.find((x) => x.address === ip);
  return a ? links.find((l) => l.index === a.index) : undefined;
}

/** The link of the main table's IPv4 default route, if any. */
function defaultRouteLink(routes: readonly Route[], links: readonly Link[]): Link | undefined {
  const def = routes.find((r) => r.family === 4 && r.table === 254 && r.dst === '0.0.0.0/0' && r.oif !== undefined);
  return def ? links.find((l) => l.index === def.oif) : undefined;
}

// The node's uplink (the interface peers reach it through) and its public IP, in the node's netns:
// from --iface, or the interface holding --public-ip, or the one carrying the IPv4 default route.
import type { Addr, Link, Route, Rtnl } from '../lib/netlink/index.ts';
import { containsIPv4, parseCidr4Loose, parseIPv4 } from '../lib/ip/ipv4.ts';

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
  /** Names or addresses, tried in order (flanneld's repeatable --iface). */
  iface?: string[];
  /** Tried after iface: against every address first, then every name (flanneld's order). */
  ifaceRegex?: RegExp[];
  /** After ifaceRegex: the link the main table routes this IPv4 address through. */
  ifaceCanReach?: string;
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
  if (q.iface !== undefined || q.ifaceRegex !== undefined || q.ifaceCanReach !== undefined) {
    link = chosenLink(links, addrs, routes, q);
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

/** The link --iface, --iface-regex or --iface-can-reach select, in that order; throws naming them when none does. */
function chosenLink(links: readonly Link[], addrs: readonly Addr[], routes: readonly Route[], q: UplinkQuery): Link {
  for (const want of q.iface ?? []) {
    const l = links.find((x) => x.name === want) ?? addrLink(links, addrs, want);
    if (l) return l;
  }
  for (const re of q.ifaceRegex ?? []) {
    const a = addrs.find((x) => re.test(x.address));
    const l = a ? links.find((x) => x.index === a.index) : links.find((x) => re.test(x.name) && addrs.some((y) => y.index === x.index));
    if (l) return l;
  }
  if (q.ifaceCanReach !== undefined) {
    const ip = parseIPv4(q.ifaceCanReach);
    if (ip === null) throw new Error(`--iface-can-reach ${JSON.stringify(q.ifaceCanReach)} is not an IPv4 address`);
    const r = routeTo(routes, ip);
    const l = r ? links.find((x) => x.index === r.oif) : undefined;
    if (l) return l;
  }
  const asked = [...(q.iface ?? []).map((x) => `--iface ${x}`), ...(q.ifaceRegex ?? []).map((x) => `--iface-regex ${x.source}`), ...(q.ifaceCanReach !== undefined ? [`--iface-can-reach ${q.ifaceCanReach}`] : [])];
  throw new Error(`${asked.join(', ')}: no such interface, address or route`);
}

/** The main-table route (longest prefix) to `ip`, as the kernel would pick it without policy rules. */
function routeTo(routes: readonly Route[], ip: number): Route | undefined {
  let best: Route | undefined;
  let bestLen = -1;
  for (const r of routes) {
    const c = parseCidr4Loose(r.dst);
    if (!c || r.oif === undefined || c.prefix <= bestLen || !containsIPv4(c, ip)) continue;
    best = r;
    bestLen = c.prefix;
  }
  return best;
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

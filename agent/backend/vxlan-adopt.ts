// Taking over a VTEP that flanneld (or an earlier weftd) left on the node, in the node's netns: when
// flannel.<VNI> (flannel-v6.<VNI>) already has the parameters weftd would give it and carries an
// address of the cluster network, weftd keeps that device and its MAC. Peers hold that MAC in their
// neighbour and FDB tables, so a switch from flanneld to weftd re-advertises the same VtepMAC and
// no peer has to reprogram; a new MAC would lose pod traffic until every peer followed.
import { cidrContains, parseCidr } from '../../lib/ip/index.ts';
import type { Link, Rtnl } from '../../lib/netlink/index.ts';

/** What a VTEP must be for weftd to keep it: the spec fields ensureVtep compares, minus the MAC. */
export interface AdoptWant {
  vni: number;
  port: number;
  local: string;
  /** ifindex of the uplink (IFLA_VXLAN_LINK), when known. */
  uplinkIndex?: number;
  /** Network (family 4) or IPv6Network (6): the device's address must lie in it. */
  network: string;
}

const UNICAST_MAC = /^[0-9a-f][02468ace](:[0-9a-f]{2}){5}$/;

/**
 * The MAC to keep from an existing VTEP, or null when the device is not one weftd would keep (pure):
 * vxlan of the same VNI, port and local address, over the uplink, learning off, a unicast MAC, and
 * every global address of the family inside the cluster network (flannel's network address /32 or /128).
 */
export function adoptableMac(link: Link | null, addrs: readonly string[], want: AdoptWant): string | null {
  const x = link?.vxlan;
  if (link === null || link === undefined || link.kind !== 'vxlan' || x === undefined) return null;
  if (x.vni !== want.vni || x.port !== want.port || x.local !== want.local || x.learning === true) return null;
  if (want.uplinkIndex !== undefined && x.devIndex !== undefined && x.devIndex !== want.uplinkIndex) return null;
  const mac = link.mac.toLowerCase();
  if (!UNICAST_MAC.test(mac) || mac === '00:00:00:00:00:00') return null;
  const net = parseCidr(want.network);
  if (net === null || addrs.length === 0) return null;
  const inNet = addrs.every((a) => {
    const c = parseCidr(a);
    return c !== null && c.addr.family === net.addr.family && cidrContains(net, c.addr);
  });
  return inNet ? mac : null;
}

/** Reads `name` and its global addresses of `family` over `rtnl` and judges them with adoptableMac. */
export function readAdoptableMac(rtnl: Rtnl, name: string, family: 4 | 6, want: AdoptWant): string | null {
  const link = rtnl.getLink(name);
  if (!link) return null;
  const addrs = rtnl.listAddrs({ family, index: link.index }).filter((a) => a.scope === 0).map((a) => a.cidr);
  return adoptableMac(link, addrs, want);
}

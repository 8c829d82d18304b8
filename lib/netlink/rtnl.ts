// Rtnl: the rtnetlink verbs weft uses, over one NETLINK_ROUTE socket (reading links and addresses is
// RtnlLinks's, rtnl-links.ts). Every call is synchronous and acts on the namespace the socket was
// opened in, whatever the calling thread's netns is later.
import { parseMac } from './addr.ts';
import { attrStr, attrU32, formatAttr } from './attrs.ts';
import {
  AF_BRIDGE, AF_UNSPEC, IFLA_ADDRESS, IFLA_IFALIAS, IFLA_IFNAME, IFLA_MASTER, IFLA_MTU, IFLA_NET_NS_FD, IFLA_TXQLEN, NETLINK_ROUTE,
  NLM_F_CREATE, NLM_F_EXCL, NLM_F_REPLACE, RTM_DELADDR, RTM_DELLINK, RTM_DELNEIGH, RTM_DELROUTE,
  RTM_GETNEIGH, RTM_GETROUTE, RTM_NEWADDR, RTM_NEWLINK, RTM_NEWNEIGH, RTM_NEWROUTE, RTM_SETLINK, afOf,
} from './constants.ts';
import { formatFdbRequest, parseFdb, type Fdb } from './fdb.ts';
import { formatAddrRequest } from './ifaddr.ts';
import { IFF_ALLMULTI, IFF_PROMISC, IFF_UP, formatIfinfo } from './link.ts';
import { formatHairpinProtinfo, formatLinkInfo, formatVethInfo, formatVxlanData, linkBasics } from './link-kinds.ts';
import { formatNdmsg, formatNeighRequest, ndmsgIndex, parseNeigh, type Neigh } from './neigh.ts';
import { formatRouteRequest, formatRtmsg, parseRoute, type Route, type RouteSpec } from './route.ts';
import { RtnlLinks } from './rtnl-links.ts';
import { NlSocket, openSysTransport, type NlTransport } from './socket.ts';

/** NLM_F_* for a create: fail with EEXIST unless `replace`. */
function createFlags(replace?: boolean): number {
  return NLM_F_CREATE | (replace ? NLM_F_REPLACE : NLM_F_EXCL);
}

/** An rtnetlink socket with weft's verbs (RtnlLinks's and the rest). Failed requests throw NetlinkError (see isNotFound/isExists). */
export class Rtnl extends RtnlLinks {
  /** Opens a NETLINK_ROUTE socket in the calling thread's current netns; it stays bound to that netns. */
  static override open(): Rtnl {
    return new Rtnl(new NlSocket(openSysTransport(NETLINK_ROUTE, 0)));
  }

  /** Wraps an injected transport (unit tests with a fake kernel). */
  static override fromTransport(t: NlTransport): Rtnl {
    return new Rtnl(new NlSocket(t));
  }

  /** Creates a veth pair; with peerNetnsFd the peer is created directly in that netns. EEXIST if `name` exists. */
  addVeth(o: { name: string; peerName: string; peerNetnsFd?: number; mtu?: number; mac?: string; peerMac?: string }): void {
    const peer: { name: string; netnsFd?: number; mtu?: number; mac?: string } = { name: o.peerName };
    if (o.peerNetnsFd !== undefined) peer.netnsFd = o.peerNetnsFd;
    if (o.mtu !== undefined) peer.mtu = o.mtu;
    if (o.peerMac !== undefined) peer.mac = o.peerMac;
    const info = formatVethInfo(peer, (attrs) => formatIfinfo({}, attrs));
    this.newLink(`addVeth ${o.name}`, [...linkBasics(o), info]);
  }

  /** Creates a bridge device (down). EEXIST if `name` exists. */
  addBridge(o: { name: string; mtu?: number; mac?: string }): void {
    this.newLink(`addBridge ${o.name}`, [...linkBasics(o), formatLinkInfo('bridge')]);
  }

  /** Creates a vxlan device (down); `port` is the UDP destination port, `devIndex` the underlay link. */
  addVxlan(o: { name: string; vni: number; port: number; local: string; devIndex?: number; learning: boolean; mtu?: number; mac?: string }): void {
    this.newLink(`addVxlan ${o.name}`, [...linkBasics(o), formatLinkInfo('vxlan', formatVxlanData(o))]);
  }

  /** Creates an ifb device, up when `up` (flags in the creating message, so it never exists down). EEXIST if `name` exists. */
  addIfb(o: { name: string; mtu?: number; mac?: string; txqlen?: number; up?: boolean }): void {
    const attrs = [...linkBasics(o), formatLinkInfo('ifb')];
    if (o.txqlen !== undefined) attrs.push(attrU32(IFLA_TXQLEN, o.txqlen));
    this.newLink(`addIfb ${o.name}`, attrs, o.up === true ? IFF_UP : 0);
  }

  private newLink(op: string, attrs: Uint8Array[], flags = 0): void {
    this.sock.request(op, RTM_NEWLINK, createFlags(), formatIfinfo({ flags, change: flags }, attrs));
  }

  /** Sets the MTU. Idempotent. */
  setMtu(index: number, mtu: number): void { this.setLink(`setMtu ${index}`, index, [attrU32(IFLA_MTU, mtu)]); }
  /** Enslaves the link to `masterIndex` (a bridge). Idempotent. */
  setMaster(index: number, masterIndex: number): void { this.setLink(`setMaster ${index}`, index, [attrU32(IFLA_MASTER, masterIndex)]); }
  /** Releases the link from its master (IFLA_MASTER 0). Idempotent. */
  setNoMaster(index: number): void { this.setLink(`setNoMaster ${index}`, index, [attrU32(IFLA_MASTER, 0)]); }
  /** Sets the link-layer address. Idempotent. */
  setMac(index: number, mac: string): void { this.setLink(`setMac ${index}`, index, [formatAttr(IFLA_ADDRESS, parseMac(mac))]); }
  /** Moves the link into the netns open at `netnsFd`; its index may change there. */
  setLinkNetns(index: number, netnsFd: number): void { this.setLink(`setLinkNetns ${index}`, index, [attrU32(IFLA_NET_NS_FD, netnsFd)]); }
  /** Sets or clears IFF_PROMISC. Idempotent. */
  setPromisc(index: number, on: boolean): void { this.setLink(`setPromisc ${index}`, index, [], on ? IFF_PROMISC : 0, IFF_PROMISC); }
  /** Sets or clears IFF_ALLMULTI. Idempotent. */
  setAllmulti(index: number, on: boolean): void { this.setLink(`setAllmulti ${index}`, index, [], on ? IFF_ALLMULTI : 0, IFF_ALLMULTI); }
  /** Sets the transmit queue length (IFLA_TXQLEN). Idempotent. */
  setTxQLen(index: number, len: number): void { this.setLink(`setTxQLen ${index}`, index, [attrU32(IFLA_TXQLEN, len)]); }
  /**
   * One RTM_SETLINK for a new bridge port: alias (IFLA_IFALIAS), master (IFLA_MASTER) and, with `up`,
   * IFF_UP. The kernel applies them in that order (do_setlink, net/core/rtnetlink.c). Idempotent.
   */
  setPort(index: number, o: { alias?: string; master: number; up: boolean }): void {
    const attrs = o.alias === undefined ? [] : [attrStr(IFLA_IFALIAS, o.alias)];
    attrs.push(attrU32(IFLA_MASTER, o.master));
    this.setLink(`setPort ${index}`, index, attrs, o.up ? IFF_UP : 0, o.up ? IFF_UP : 0);
  }
  /** Sets the link's alias (IFLA_IFALIAS; '' removes it). Idempotent. */
  setAlias(index: number, alias: string): void { this.setLink(`setAlias ${index}`, index, [attrStr(IFLA_IFALIAS, alias)]); }
  /** Renames the link (it must be down). */
  renameLink(index: number, name: string): void { this.setLink(`renameLink ${index}`, index, [attrStr(IFLA_IFNAME, name)]); }

  /** Turns hairpin mode on a bridge port on or off (AF_BRIDGE RTM_SETLINK, handled by the master bridge). Idempotent. */
  setHairpin(index: number, on: boolean): void {
    this.sock.request(`setHairpin ${index}`, RTM_SETLINK, 0, formatIfinfo({ family: AF_BRIDGE, index }, [formatHairpinProtinfo(on)]));
  }

  /** Deletes the link (a veth takes its peer with it). ENODEV when it is gone. */
  deleteLink(index: number): void {
    this.sock.request(`deleteLink ${index}`, RTM_DELLINK, 0, formatIfinfo({ index }));
  }

  // ---- addresses ----

  /** Adds `cidr` to link `index`; EEXIST when present unless `replace`. noDad skips IPv6 duplicate address detection. */
  addAddr(o: { index: number; cidr: string; noDad?: boolean; broadcast?: string; scope?: number; replace?: boolean }): void {
    this.sock.request(`addAddr ${o.cidr}`, RTM_NEWADDR, createFlags(o.replace), formatAddrRequest(o));
  }

  /** Removes `cidr` from link `index`; EADDRNOTAVAIL when it is not there. */
  delAddr(o: { index: number; cidr: string }): void {
    this.sock.request(`delAddr ${o.cidr}`, RTM_DELADDR, 0, formatAddrRequest(o));
  }

  // ---- routes ----

  /** Routes of the netns (all tables unless `table` is given), optionally one family. */
  listRoutes(o: { family?: 4 | 6; table?: number } = {}): Route[] {
    const req = formatRtmsg({ family: o.family ? afOf(o.family) : AF_UNSPEC });
    return this.sock.dump('listRoutes', RTM_GETROUTE, req)
      .filter((m) => m.type === RTM_NEWROUTE)
      .map((m) => parseRoute(m.payload))
      .filter((r): r is Route => r !== null && (o.family === undefined || r.family === o.family) && (o.table === undefined || r.table === o.table));
  }

  /** Adds a route; EEXIST when an equal route exists unless `replace`. */
  addRoute(r: RouteSpec & { replace?: boolean }): void {
    this.sock.request(`addRoute ${r.dst}`, RTM_NEWROUTE, createFlags(r.replace), formatRouteRequest(r, false));
  }

  /** Deletes the first route matching the spec (unset fields match anything); ESRCH when none does. */
  delRoute(r: RouteSpec): void {
    this.sock.request(`delRoute ${r.dst}`, RTM_DELROUTE, 0, formatRouteRequest(r, true));
  }

  // ---- neighbours ----

  /** ARP/ND entries, optionally one family and/or one link. */
  listNeigh(o: { family?: 4 | 6; index?: number } = {}): Neigh[] {
    const req = formatNdmsg({ family: o.family ? afOf(o.family) : AF_UNSPEC });
    // Entries of other devices are skipped on their header, before any attribute is decoded.
    return this.sock.dump('listNeigh', RTM_GETNEIGH, req)
      .filter((m) => m.type === RTM_NEWNEIGH && (o.index === undefined || ndmsgIndex(m.payload) === o.index))
      .map((m) => parseNeigh(m.payload))
      .filter((n): n is Neigh => n !== null && (o.family === undefined || n.family === o.family) && (o.index === undefined || n.index === o.index));
  }

  /** Adds an ARP/ND entry (NUD_PERMANENT with `permanent`); EEXIST when present unless `replace`. */
  addNeigh(o: { index: number; ip: string; mac: string; permanent?: boolean; replace?: boolean }): void {
    this.sock.request(`addNeigh ${o.ip}`, RTM_NEWNEIGH, createFlags(o.replace), formatNeighRequest(o));
  }

  /** Deletes an ARP/ND entry; ENOENT when it is not there. */
  delNeigh(o: { index: number; ip: string }): void {
    this.sock.request(`delNeigh ${o.ip}`, RTM_DELNEIGH, 0, formatNeighRequest({ index: o.index, ip: o.ip }));
  }

  // ---- FDB ----

  /** Bridge/vxlan FDB entries, optionally of one device. */
  listFdb(o: { index?: number } = {}): Fdb[] {
    return this.sock.dump('listFdb', RTM_GETNEIGH, formatNdmsg({ family: AF_BRIDGE }))
      .filter((m) => m.type === RTM_NEWNEIGH && (o.index === undefined || ndmsgIndex(m.payload) === o.index))
      .map((m) => parseFdb(m.payload))
      .filter((f): f is Fdb => f !== null && (o.index === undefined || f.index === o.index));
  }

  /** Adds an FDB entry (self defaults to true: the device's own table, e.g. mac -> remote VTEP on vxlan). */
  addFdb(o: { index: number; mac: string; dst?: string; self?: boolean; permanent?: boolean; replace?: boolean }): void {
    this.sock.request(`addFdb ${o.mac}`, RTM_NEWNEIGH, createFlags(o.replace), formatFdbRequest(o, false));
  }

  /** Deletes an FDB entry; ENOENT when it is not there. */
  delFdb(o: { index: number; mac: string; dst?: string; self?: boolean }): void {
    this.sock.request(`delFdb ${o.mac}`, RTM_DELNEIGH, 0, formatFdbRequest(o, true));
  }
}

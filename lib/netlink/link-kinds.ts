// Per-kind link attributes: IFLA_LINKINFO for veth, bridge and vxlan (linux/if_link.h,
// linux/veth.h) and the bridge-port IFLA_PROTINFO used to set hairpin mode.
import { formatIP, parseIP, parseMac } from './addr.ts';
import { attrBe16, attrMap, attrNested, attrStr, attrU32, attrU8, formatAttr, getBe16, getU32, getU8, parseAttrs } from './attrs.ts';
import { IFLA_ADDRESS, IFLA_IFNAME, IFLA_LINKINFO, IFLA_MTU, IFLA_NET_NS_FD, IFLA_PROTINFO } from './constants.ts';

export const IFLA_INFO_KIND = 1;
export const IFLA_INFO_DATA = 2;
export const IFLA_INFO_SLAVE_KIND = 4;
/** linux/veth.h: the peer is described by a full struct ifinfomsg plus IFLA_* attributes. */
export const VETH_INFO_PEER = 1;

export const IFLA_VXLAN_ID = 1;
export const IFLA_VXLAN_LINK = 3;
export const IFLA_VXLAN_LOCAL = 4;
export const IFLA_VXLAN_LEARNING = 7;
/** Destination UDP port, a __be16 (linux/if_link.h). */
export const IFLA_VXLAN_PORT = 15;
export const IFLA_VXLAN_LOCAL6 = 17;

/** linux/if_link.h IFLA_BRPORT_MODE: hairpin (reflective relay) on a bridge port. */
export const IFLA_BRPORT_MODE = 4;

/** Decoded vxlan device parameters. */
export interface VxlanInfo {
  vni: number;
  port: number;
  local?: string;
  devIndex?: number;
  learning?: boolean;
}

/** Common optional attributes of a new link: name, MTU, MAC. */
export function linkBasics(o: { name: string; mtu?: number; mac?: string }): Uint8Array[] {
  const out = [attrStr(IFLA_IFNAME, o.name)];
  if (o.mtu !== undefined) out.push(attrU32(IFLA_MTU, o.mtu));
  if (o.mac !== undefined) out.push(formatAttr(IFLA_ADDRESS, parseMac(o.mac)));
  return out;
}

/** IFLA_LINKINFO { KIND kind, DATA data? }. */
export function formatLinkInfo(kind: string, data?: readonly Uint8Array[]): Uint8Array {
  // The kind goes without a NUL, as iproute2 sends it; the kernel copies it with nla_strscpy either way.
  const inner = [formatAttr(IFLA_INFO_KIND, Buffer.from(kind, 'latin1'))];
  if (data) inner.push(attrNested(IFLA_INFO_DATA, data));
  return attrNested(IFLA_LINKINFO, inner);
}

/** IFLA_LINKINFO for a veth whose peer may be created directly in another netns (by fd). */
export function formatVethInfo(
  peer: { name: string; netnsFd?: number; mtu?: number; mac?: string },
  formatIfinfo: (attrs: readonly Uint8Array[]) => Uint8Array,
): Uint8Array {
  const peerAttrs = linkBasics(peer);
  if (peer.netnsFd !== undefined) peerAttrs.push(attrU32(IFLA_NET_NS_FD, peer.netnsFd));
  return formatLinkInfo('veth', [formatAttr(VETH_INFO_PEER, formatIfinfo(peerAttrs))]);
}

/** IFLA_LINKINFO DATA for a vxlan device; the address family of `local` picks LOCAL or LOCAL6. */
export function formatVxlanData(o: { vni: number; port: number; local: string; devIndex?: number; learning: boolean }): Uint8Array[] {
  const local = parseIP(o.local);
  const out = [
    attrU32(IFLA_VXLAN_ID, o.vni),
    formatAttr(local.length === 4 ? IFLA_VXLAN_LOCAL : IFLA_VXLAN_LOCAL6, local),
    attrU8(IFLA_VXLAN_LEARNING, o.learning ? 1 : 0),
    attrBe16(IFLA_VXLAN_PORT, o.port),
  ];
  if (o.devIndex !== undefined) out.push(attrU32(IFLA_VXLAN_LINK, o.devIndex));
  return out;
}

/** Parses vxlan IFLA_INFO_DATA. */
export function parseVxlanData(data: Uint8Array): VxlanInfo {
  const m = attrMap(parseAttrs(data));
  const id = m.get(IFLA_VXLAN_ID);
  const port = m.get(IFLA_VXLAN_PORT);
  const v: VxlanInfo = { vni: id ? getU32(id) : 0, port: port ? getBe16(port) : 0 };
  const local = m.get(IFLA_VXLAN_LOCAL) ?? m.get(IFLA_VXLAN_LOCAL6);
  if (local) v.local = formatIP(local.data);
  const dev = m.get(IFLA_VXLAN_LINK);
  if (dev) v.devIndex = getU32(dev);
  const learning = m.get(IFLA_VXLAN_LEARNING);
  if (learning) v.learning = getU8(learning) !== 0;
  return v;
}

/**
 * IFLA_PROTINFO { IFLA_BRPORT_MODE on } for an AF_BRIDGE RTM_SETLINK. NLA_F_NESTED is required:
 * the bridge's br_setlink treats an un-flagged IFLA_PROTINFO as the old single-byte port state.
 */
export function formatHairpinProtinfo(on: boolean): Uint8Array {
  return attrNested(IFLA_PROTINFO, [attrU8(IFLA_BRPORT_MODE, on ? 1 : 0)], true);
}

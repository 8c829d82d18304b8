// Link messages: struct ifinfomsg (linux/rtnetlink.h) plus IFLA_* attributes (linux/if_link.h),
// parsed into `Link` and formatted for RTM_NEWLINK / RTM_SETLINK / RTM_DELLINK / RTM_GETLINK.
import { formatMac } from './addr.ts';
import { LE, attrMap, concat, getS32, getStr, getU32, getU8, parseAttrs, rawExtras, view, type NlAttr } from './attrs.ts';
import {
  IFLA_ADDRESS, IFLA_IFALIAS, IFLA_IFNAME, IFLA_LINK, IFLA_LINKINFO, IFLA_LINK_NETNSID, IFLA_MASTER, IFLA_MTU, IFLA_OPERSTATE, IFLA_TXQLEN,
} from './constants.ts';
import { IFLA_INFO_DATA, IFLA_INFO_KIND, IFLA_INFO_SLAVE_KIND, parseVxlanData, type VxlanInfo } from './link-kinds.ts';

/** sizeof(struct ifinfomsg): u8 family, u8 pad, u16 type, s32 index, u32 flags, u32 change. */
export const IFINFOMSG_LEN = 16;
/** IFF_UP (linux/if.h). */
export const IFF_UP = 0x1;
/** IFF_PROMISC (linux/if.h). */
export const IFF_PROMISC = 0x100;
/** IFF_ALLMULTI (linux/if.h). */
export const IFF_ALLMULTI = 0x200;

/** RFC 2863 operational states in IFLA_OPERSTATE order (linux/if.h IF_OPER_*). */
const OPER_STATES = ['unknown', 'notpresent', 'down', 'lowerlayerdown', 'testing', 'dormant', 'up'] as const;

/** A network interface as the kernel describes it. */
export interface Link {
  index: number;
  name: string;
  /** ifi_flags (IFF_*). */
  flags: number;
  /** Administratively up (IFF_UP). */
  up: boolean;
  /** ARPHRD_* device type (1 ether, 772 loopback, 65534 none/tun). */
  type: number;
  mtu: number;
  /** IFLA_TXQLEN: the transmit queue length, when the kernel reports it. */
  txqlen?: number;
  /** Link-layer address, lowercase "aa:bb:..."; "" when the device has none (tun). */
  mac: string;
  master?: number;
  /** IFLA_INFO_KIND: 'veth', 'bridge', 'vxlan', 'tun', ... */
  kind?: string;
  /** IFLA_INFO_SLAVE_KIND, e.g. 'bridge' for a bridge port. */
  slaveKind?: string;
  /** IFLA_LINK: for a veth the peer's index (in linkNetnsId's namespace when that is set). */
  peerIndex?: number;
  /** IFLA_LINK_NETNSID: the peer namespace's id as seen from this namespace. */
  linkNetnsId?: number;
  operState: string;
  /** IFLA_IFALIAS, when set. */
  alias?: string;
  vxlan?: VxlanInfo;
  /** Attributes this codec does not decode, kept as raw bytes. */
  extra: Array<{ type: number; data: Uint8Array }>;
}

const KNOWN = new Set([IFLA_TXQLEN, IFLA_IFALIAS, IFLA_ADDRESS, IFLA_IFNAME, IFLA_MTU, IFLA_LINK, IFLA_MASTER, IFLA_OPERSTATE, IFLA_LINKINFO, IFLA_LINK_NETNSID]);

/** Formats struct ifinfomsg followed by attributes. */
export function formatIfinfo(h: { family?: number; type?: number; index?: number; flags?: number; change?: number }, attrs: readonly Uint8Array[] = []): Uint8Array {
  const hdr = new Uint8Array(IFINFOMSG_LEN);
  const dv = view(hdr);
  dv.setUint8(0, h.family ?? 0);
  dv.setUint16(2, h.type ?? 0, LE);
  dv.setInt32(4, h.index ?? 0, LE);
  dv.setUint32(8, (h.flags ?? 0) >>> 0, LE);
  dv.setUint32(12, (h.change ?? 0) >>> 0, LE);
  return concat([hdr, ...attrs]);
}

/** Parses an RTM_NEWLINK / RTM_DELLINK payload into a Link. */
export function parseLink(payload: Uint8Array): Link {
  if (payload.length < IFINFOMSG_LEN) throw new RangeError(`ifinfomsg too short: ${payload.length} bytes`);
  const dv = view(payload);
  const flags = dv.getUint32(8, LE);
  const attrs = parseAttrs(payload.subarray(IFINFOMSG_LEN));
  const m = attrMap(attrs);
  const a = (t: number) => m.get(t);
  const or = <T>(t: number, get: (x: NlAttr) => T, dflt: T): T => {
    const x = m.get(t);
    return x ? get(x) : dflt;
  };
  let extra: Link['extra'] | undefined;
  const link: Link = {
    index: dv.getInt32(4, LE),
    name: or(IFLA_IFNAME, getStr, ''),
    flags,
    up: (flags & IFF_UP) !== 0,
    type: dv.getUint16(2, LE),
    mtu: or(IFLA_MTU, getU32, 0),
    mac: or(IFLA_ADDRESS, (x) => formatMac(x.data), ''),
    operState: OPER_STATES[or(IFLA_OPERSTATE, getU8, 0)] ?? 'unknown',
    // Copied out on first use only: a link reply carries dozens of attributes nobody on the ADD path reads.
    get extra() {
      extra ??= rawExtras(attrs, KNOWN);
      return extra;
    },
  };
  const master = a(IFLA_MASTER);
  if (master) link.master = getU32(master);
  const peer = a(IFLA_LINK);
  if (peer) link.peerIndex = getU32(peer);
  const nsid = a(IFLA_LINK_NETNSID);
  if (nsid) link.linkNetnsId = getS32(nsid);
  const txq = a(IFLA_TXQLEN);
  if (txq) link.txqlen = getU32(txq);
  const alias = a(IFLA_IFALIAS);
  if (alias) link.alias = getStr(alias);
  const info = a(IFLA_LINKINFO);
  if (info) parseLinkInfo(info.data, link);
  return link;
}

/** Fills kind, slave kind and per-kind data (vxlan) from a nested IFLA_LINKINFO. */
function parseLinkInfo(data: Uint8Array, link: Link): void {
  const info = attrMap(parseAttrs(data));
  const kind = info.get(IFLA_INFO_KIND);
  if (kind) link.kind = getStr(kind);
  const slave = info.get(IFLA_INFO_SLAVE_KIND);
  if (slave) link.slaveKind = getStr(slave);
  const kdata = info.get(IFLA_INFO_DATA);
  if (kdata && link.kind === 'vxlan') link.vxlan = parseVxlanData(kdata.data);
}

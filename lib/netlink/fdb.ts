// Forwarding-database entries: AF_BRIDGE neighbour messages (linux/neighbour.h) for a bridge port
// (NTF_MASTER) or a vxlan device's own table (NTF_SELF, with NDA_DST = the remote VTEP).
import { formatIP, formatMac, parseIP, parseMac } from './addr.ts';
import { attrMap, formatAttr, getBe16, getU16, getU32, parseAttrs, rawExtras } from './attrs.ts';
import { AF_BRIDGE } from './constants.ts';
import {
  NDA_DST, NDA_LLADDR, NDA_MASTER, NDA_PORT, NDA_VLAN, NDA_VNI, NDMSG_LEN, NTF_MASTER, NTF_SELF, NUD_NOARP, NUD_PERMANENT,
  NUD_REACHABLE, formatNdmsg, parseNdmsg,
} from './neigh.ts';

/** One FDB entry. */
export interface Fdb {
  index: number;
  mac: string;
  /** Remote VTEP address (vxlan NTF_SELF entries). */
  dst?: string;
  vlan?: number;
  vni?: number;
  port?: number;
  /** The bridge this port belongs to (NDA_MASTER). */
  master?: number;
  /** NUD_* bits. */
  state: number;
  permanent: boolean;
  /** NTF_* bits. */
  flags: number;
  self: boolean;
  extra: Array<{ type: number; data: Uint8Array }>;
}

/**
 * Formats an RTM_NEWNEIGH / RTM_DELNEIGH payload for an FDB entry. `self` defaults to true
 * (the device's own table, what a vxlan device needs); false addresses the master bridge.
 */
export function formatFdbRequest(o: { index: number; mac: string; dst?: string; self?: boolean; permanent?: boolean }, del: boolean): Uint8Array {
  const attrs = [formatAttr(NDA_LLADDR, parseMac(o.mac))];
  if (o.dst !== undefined) attrs.push(formatAttr(NDA_DST, parseIP(o.dst)));
  // iproute2's bridge(8) sends NUD_NOARP | NUD_PERMANENT for a permanent entry; the kernel accepts either.
  const state = del ? 0 : o.permanent === false ? NUD_REACHABLE : NUD_PERMANENT | NUD_NOARP;
  return formatNdmsg({ family: AF_BRIDGE, index: o.index, state, flags: o.self === false ? NTF_MASTER : NTF_SELF }, attrs);
}

const KNOWN = new Set([NDA_DST, NDA_LLADDR, NDA_VLAN, NDA_VNI, NDA_PORT, NDA_MASTER]);

/** Parses an AF_BRIDGE RTM_NEWNEIGH / RTM_DELNEIGH payload; null for other families. */
export function parseFdb(payload: Uint8Array): Fdb | null {
  const h = parseNdmsg(payload);
  if (h.family !== AF_BRIDGE) return null;
  const attrs = parseAttrs(payload.subarray(NDMSG_LEN));
  const m = attrMap(attrs);
  const ll = m.get(NDA_LLADDR);
  const f: Fdb = {
    index: h.index,
    mac: ll ? formatMac(ll.data) : '',
    state: h.state,
    permanent: (h.state & NUD_PERMANENT) !== 0,
    flags: h.flags,
    self: (h.flags & NTF_SELF) !== 0,
    extra: rawExtras(attrs, KNOWN),
  };
  const dst = m.get(NDA_DST);
  if (dst) f.dst = formatIP(dst.data);
  const vlan = m.get(NDA_VLAN);
  if (vlan) f.vlan = getU16(vlan);
  const vni = m.get(NDA_VNI);
  if (vni) f.vni = getU32(vni);
  const port = m.get(NDA_PORT);
  if (port) f.port = getBe16(port);
  const master = m.get(NDA_MASTER);
  if (master) f.master = getU32(master);
  return f;
}

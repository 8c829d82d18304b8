// Desired data-plane state as a pure function of the lease table, this node's lease and the backend:
// what weftd must have programmed in the node's netns, one address family at a time (flannel keeps
// the IPv4 side on flannel.<VNI> and the IPv6 side on flannel-v6.<VNI>, each from its own lease
// fields). No I/O here, so it is unit-tested by tables.
import { canonicalCidr, cidrContains, formatCidr, formatIp, hasHostBits, parseCidr, parseIp, type Cidr, type Family } from '../../lib/ip/index.ts';
import type { BackendData, Lease } from '../lease/store.ts';

/**
 * rtm_protocol of every route weftd installs (linux/rtnetlink.h: values above RTPROT_STATIC are
 * for routing daemons; 87 is unassigned in iproute2's rt_protos). It makes "ours" visible in the
 * kernel (`ip route show proto 87`) and survives a restart, so weftd never touches other routes.
 */
export const RTPROT_WEFT = 87;

/** A route weftd wants; `dev` is resolved to an ifindex when applying (the VTEP of the route's family). */
export interface WantRoute {
  dst: string;
  gw: string;
  dev: 'vtep' | 'uplink';
  onlink: boolean;
}

/** A permanent neighbour entry on the VTEP: remote subnet network address -> its VtepMAC. */
export interface WantNeigh {
  ip: string;
  mac: string;
}

/** A VTEP FDB entry: VtepMAC -> remote node address (where to send the encapsulated frame). */
export interface WantFdb {
  mac: string;
  dst: string;
}

/** Everything one reconcile of one family aims for; per lease in the order neighbour, FDB, route. */
export interface DesiredState {
  routes: WantRoute[];
  neighs: WantNeigh[];
  fdbs: WantFdb[];
  /** Leases that could not be programmed (wrong backend, missing VtepMAC, no subnet of this family) with the reason. */
  skipped: Array<{ subnet: string; reason: string }>;
}

/** What the desired state depends on besides the leases. */
export interface DesiredInput {
  backend: 'vxlan' | 'host-gw' | 'udp';
  /** Which side of the leases: 4 (Subnet, PublicIP, BackendData) or 6 (IPv6Subnet, PublicIPv6, BackendV6Data). Default 4. */
  family?: Family;
  /** This node's lease subnet of that family (skipped in the table). */
  ownSubnet: string;
  /** This node's public address of that family (a lease with it is ours even under another subnet: skipped). */
  publicIp: string;
  /** The uplink's address of that family with its prefix ("192.0.2.11/24"), for DirectRouting and host-gw reachability. */
  uplinkCidr: string;
  directRouting: boolean;
  vni: number;
}

/** One family's side of a lease, as flannel reads it (LeaseAttrs.PublicIP/BackendData or their V6 twins). */
interface LeaseSide {
  subnet: string;
  publicIp: string;
  data: BackendData;
}

function sideOf(l: Lease, family: Family): LeaseSide | null {
  if (family === 4) return { subnet: l.subnet, publicIp: l.publicIp, data: l.backendData };
  if (l.ipv6Subnet === undefined || l.ipv6Subnet === '') return null;
  return { subnet: l.ipv6Subnet, publicIp: l.publicIpv6 ?? '', data: l.backendV6Data ?? {} };
}

/** A network-form prefix of `family` ("10.244.3.0/24", "fd00:10:244:3::/64"); null otherwise. */
function networkOfFamily(s: string, family: Family): Cidr | null {
  const c = parseCidr(s);
  return c === null || c.addr.family !== family || hasHostBits(c) ? null : c;
}

const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i;

/** The desired state of one family for `leases` (pure). */
export function desiredState(input: DesiredInput, leases: readonly Lease[]): DesiredState {
  const family = input.family ?? 4;
  const out: DesiredState = { routes: [], neighs: [], fdbs: [], skipped: [] };
  // udp: one Network route via flannel0 (kept by the backend); peers live in the forwarder, not the kernel.
  if (input.backend === 'udp') return out;
  const uplink = parseCidr(input.uplinkCidr);
  const uplinkNet = uplink !== null && uplink.addr.family === family ? canonicalCidr(uplink) : null;
  const own = networkOfFamily(input.ownSubnet, family);
  const ownKey = own === null ? input.ownSubnet : formatCidr(own);
  const ownIp = parseIp(input.publicIp);
  const sorted = [...leases].sort((a, b) => (a.subnet < b.subnet ? -1 : a.subnet > b.subnet ? 1 : 0));
  for (const l of sorted) {
    const side = sideOf(l, family);
    if (side === null) { out.skipped.push({ subnet: l.subnet, reason: 'no IPv6 subnet in the lease' }); continue; }
    const sn = networkOfFamily(side.subnet, family);
    const peer = parseIp(side.publicIp);
    const dst = sn === null ? side.subnet : formatCidr(sn);
    if (dst === ownKey || (peer !== null && ownIp !== null && formatIp(peer) === formatIp(ownIp)) || side.publicIp === input.publicIp) continue;
    if (sn === null || peer === null || peer.family !== family) { out.skipped.push({ subnet: side.subnet, reason: `not an IPv${family} lease` }); continue; }
    const peerIp = formatIp(peer);
    const onUplink = uplinkNet !== null && cidrContains(uplinkNet, peer);
    if (input.backend === 'host-gw') {
      if (l.backendType !== 'host-gw') { out.skipped.push({ subnet: dst, reason: `backend ${l.backendType}, not host-gw` }); continue; }
      if (!onUplink) { out.skipped.push({ subnet: dst, reason: `node ${peerIp} is not on the uplink subnet ${input.uplinkCidr}` }); continue; }
      out.routes.push({ dst, gw: peerIp, dev: 'uplink', onlink: false });
      continue;
    }
    if (l.backendType !== 'vxlan') { out.skipped.push({ subnet: dst, reason: `backend ${l.backendType}, not vxlan` }); continue; }
    if (input.directRouting && onUplink) {
      // DirectRouting: same L2 as us, so plain routing via the node beats encapsulation.
      out.routes.push({ dst, gw: peerIp, dev: 'uplink', onlink: false });
      continue;
    }
    const mac = side.data.VtepMAC;
    if (typeof mac !== 'string' || !MAC.test(mac)) {
      out.skipped.push({ subnet: dst, reason: `VtepMAC ${JSON.stringify(mac)} is not a MAC` });
      continue;
    }
    if (side.data.VNI !== undefined && side.data.VNI !== input.vni) {
      out.skipped.push({ subnet: dst, reason: `VNI ${String(side.data.VNI)} differs from ours (${input.vni})` });
      continue;
    }
    // The remote VTEP's address is its subnet's network address (flannel assigns it as /32 or /128).
    const remoteVtep = formatIp(sn.addr);
    out.neighs.push({ ip: remoteVtep, mac: mac.toLowerCase() });
    out.fdbs.push({ mac: mac.toLowerCase(), dst: peerIp });
    out.routes.push({ dst, gw: remoteVtep, dev: 'vtep', onlink: true });
  }
  return out;
}

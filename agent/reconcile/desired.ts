// Desired data-plane state as a pure function of the lease table, this node's lease and the backend:
// what weftd must have programmed in the node's netns. No I/O here, so it is unit-tested by tables.
import { containsIPv4, formatIPv4, maskIPv4, parseCidr4, parseCidr4Loose, parseIPv4, type Cidr4 } from '../../lib/ip/ipv4.ts';
import type { Lease } from '../lease/store.ts';

/**
 * rtm_protocol of every route weftd installs (linux/rtnetlink.h: values above RTPROT_STATIC are
 * for routing daemons; 87 is unassigned in iproute2's rt_protos). It makes "ours" visible in the
 * kernel (`ip route show proto 87`) and survives a restart, so weftd never touches other routes.
 */
export const RTPROT_WEFT = 87;

/** A route weftd wants; `dev` is resolved to an ifindex when applying. */
export interface WantRoute {
  dst: string;
  gw: string;
  dev: 'vtep' | 'uplink';
  onlink: boolean;
}

/** A permanent ARP entry on the VTEP: remote <subnet>.0 -> its VtepMAC. */
export interface WantNeigh {
  ip: string;
  mac: string;
}

/** A VTEP FDB entry: VtepMAC -> remote node address (where to send the encapsulated frame). */
export interface WantFdb {
  mac: string;
  dst: string;
}

/** Everything one reconcile aims for; per lease in the order neighbour, FDB, route. */
export interface DesiredState {
  routes: WantRoute[];
  neighs: WantNeigh[];
  fdbs: WantFdb[];
  /** Leases that could not be programmed (wrong backend, missing VtepMAC) with the reason. */
  skipped: Array<{ subnet: string; reason: string }>;
}

/** What the desired state depends on besides the leases. */
export interface DesiredInput {
  backend: 'vxlan' | 'host-gw' | 'udp';
  /** This node's lease subnet (skipped in the table). */
  ownSubnet: string;
  /** This node's public IP (a lease with it is ours even under another subnet: skipped). */
  publicIp: string;
  /** The uplink's IPv4 prefix ("192.0.2.11/24"), for DirectRouting and host-gw reachability. */
  uplinkCidr: string;
  directRouting: boolean;
  vni: number;
}

/** The desired state for `leases` (pure). */
export function desiredState(input: DesiredInput, leases: readonly Lease[]): DesiredState {
  const out: DesiredState = { routes: [], neighs: [], fdbs: [], skipped: [] };
  // udp: one Network route via flannel0 (kept by the backend); peers live in the forwarder, not the kernel.
  if (input.backend === 'udp') return out;
  const uplink = uplinkNet(input.uplinkCidr);
  const sorted = [...leases].sort((a, b) => (a.subnet < b.subnet ? -1 : a.subnet > b.subnet ? 1 : 0));
  for (const l of sorted) {
    if (l.subnet === input.ownSubnet || l.publicIp === input.publicIp) continue;
    const sn = parseCidr4(l.subnet);
    const peer = parseIPv4(l.publicIp);
    if (sn === null || peer === null) { out.skipped.push({ subnet: l.subnet, reason: 'not an IPv4 lease' }); continue; }
    const onUplink = uplink !== null && containsIPv4(uplink, peer);
    if (input.backend === 'host-gw') {
      if (l.backendType !== 'host-gw') { out.skipped.push({ subnet: l.subnet, reason: `backend ${l.backendType}, not host-gw` }); continue; }
      if (!onUplink) { out.skipped.push({ subnet: l.subnet, reason: `node ${l.publicIp} is not on the uplink subnet ${input.uplinkCidr}` }); continue; }
      out.routes.push({ dst: l.subnet, gw: l.publicIp, dev: 'uplink', onlink: false });
      continue;
    }
    if (l.backendType !== 'vxlan') { out.skipped.push({ subnet: l.subnet, reason: `backend ${l.backendType}, not vxlan` }); continue; }
    if (input.directRouting && onUplink) {
      // DirectRouting: same L2 as us, so plain routing via the node beats encapsulation.
      out.routes.push({ dst: l.subnet, gw: l.publicIp, dev: 'uplink', onlink: false });
      continue;
    }
    const mac = l.backendData.VtepMAC;
    if (typeof mac !== 'string' || !/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i.test(mac)) {
      out.skipped.push({ subnet: l.subnet, reason: `VtepMAC ${JSON.stringify(mac)} is not a MAC` });
      continue;
    }
    if (l.backendData.VNI !== undefined && l.backendData.VNI !== input.vni) {
      out.skipped.push({ subnet: l.subnet, reason: `VNI ${String(l.backendData.VNI)} differs from ours (${input.vni})` });
      continue;
    }
    const remoteVtep = formatIPv4(sn.ip);
    out.neighs.push({ ip: remoteVtep, mac: mac.toLowerCase() });
    out.fdbs.push({ mac: mac.toLowerCase(), dst: l.publicIp });
    out.routes.push({ dst: l.subnet, gw: remoteVtep, dev: 'vtep', onlink: true });
  }
  return out;
}

/** "192.0.2.11/24" -> its network; null when unparsable. */
function uplinkNet(cidr: string): Cidr4 | null {
  const c = parseCidr4Loose(cidr);
  return c === null ? null : { ip: maskIPv4(c.ip, c.prefix), prefix: c.prefix };
}

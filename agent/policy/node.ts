// Which pods and source addresses are this node's, for the policy table (pure).
import { formatIp, nextIp, parseIp } from '../../lib/ip/addr.ts';
import { cidrContains, networkOf, parseCidr } from '../../lib/ip/cidr.ts';
import type { PodInfo } from './types.ts';

/** The node's IPv6 lease subnet and public IPv6 address, on a dual-stack network. */
export interface NodeV6 {
  subnet?: string;
  publicIp?: string;
}

/**
 * cni0's gateway (first address), the VTEP's address (the network address, flannel.<VNI>) of each
 * lease subnet and the node's public IPs: kubelet and node traffic.
 */
export function policyNodeAddrs(leaseSubnet: string, publicIp: string, v6: NodeV6 = {}): string[] {
  const out = new Set<string>();
  for (const [subnet, pub] of [[leaseSubnet, publicIp], [v6.subnet, v6.publicIp]] as const) {
    const c = parseCidr(subnet ?? '');
    if (c !== null) {
      const net = networkOf(c);
      out.add(formatIp(net));
      out.add(formatIp(nextIp(net)));
    }
    const a = parseIp(pub ?? '');
    if (a !== null) out.add(formatIp(a));
  }
  return [...out];
}

/** A pod is this node's when its hostIP is one of the node's addresses or an address lies in a lease subnet of the node. */
export function policyIsLocal(p: PodInfo, leaseSubnet: string, publicIp: string, v6: NodeV6 = {}): boolean {
  if (p.hostIP !== undefined && (p.hostIP === publicIp || (v6.publicIp !== undefined && p.hostIP === v6.publicIp))) return true;
  const subnets = [leaseSubnet, v6.subnet].map((s) => parseCidr(s ?? '')).filter((c) => c !== null);
  return p.ips.some((ip) => {
    const a = parseIp(ip);
    return a !== null && subnets.some((c) => cidrContains(c, a));
  });
}

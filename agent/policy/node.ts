// Which pods and source addresses are this node's, for the policy table (pure).
import { containsIPv4, formatIPv4, parseCidr4Loose, parseIPv4 } from '../../lib/ip/ipv4.ts';
import type { PodInfo } from './types.ts';

/** cni0's gateway (.1), the VTEP's address (.0, flannel.<VNI>) of the lease subnet and the node's public IP: kubelet and node traffic. */
export function policyNodeAddrs(leaseSubnet: string, publicIp: string): string[] {
  const c = parseCidr4Loose(leaseSubnet);
  const out = new Set<string>();
  if (c !== null) {
    out.add(formatIPv4(c.ip));
    out.add(formatIPv4(c.ip + 1));
  }
  if (parseIPv4(publicIp) !== null) out.add(publicIp);
  return [...out];
}

/** A pod is this node's when its hostIP is the node's address or its address lies in the node's lease subnet. */
export function policyIsLocal(p: PodInfo, leaseSubnet: string, publicIp: string): boolean {
  if (p.hostIP !== undefined && p.hostIP === publicIp) return true;
  const c = parseCidr4Loose(leaseSubnet);
  return c !== null && p.ips.some((ip) => { const n = parseIPv4(ip); return n !== null && containsIPv4(c, n); });
}

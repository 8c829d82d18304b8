// flannel's Kubernetes subnet manager wire format: a node's lease is its spec.podCIDR(s) plus the
// annotations flanneld writes under the prefix (default flannel.alpha.coreos.com/): backend-type,
// backend-data (compact JSON), public-ip and kube-subnet-manager="true". Pure (no I/O).
import { containsIPv4, formatCidr4, maskIPv4, parseCidr4, parseCidr4Loose } from '../../lib/ip/ipv4.ts';
import type { BackendData, Lease } from '../lease/store.ts';

/** flanneld's default --kube-annotation-prefix. */
export const DEFAULT_ANNOTATION_PREFIX = 'flannel.alpha.coreos.com';

/** The parts of a v1 Node weftd reads. */
export interface KubeNode {
  metadata?: { name?: string; annotations?: Record<string, string> | null; resourceVersion?: string };
  spec?: { podCIDR?: string; podCIDRs?: string[] | null };
}

/** The annotation keys under a prefix ("example.com" -> "example.com/backend-type", ...). */
export function annotationKeys(prefix: string): { backendType: string; backendData: string; publicIp: string; subnetManager: string } {
  const p = prefix.replace(/\/+$/, '');
  return { backendType: `${p}/backend-type`, backendData: `${p}/backend-data`, publicIp: `${p}/public-ip`, subnetManager: `${p}/kube-subnet-manager` };
}

/** The node's IPv4 pod CIDR in network form (spec.podCIDRs first, then spec.podCIDR), or null. */
export function nodePodCidr4(node: KubeNode): string | null {
  const cidrs = [...(node.spec?.podCIDRs ?? []), ...(node.spec?.podCIDR ? [node.spec.podCIDR] : [])];
  for (const c of cidrs) {
    const p = parseCidr4Loose(c);
    if (p) return formatCidr4({ ip: maskIPv4(p.ip, p.prefix), prefix: p.prefix });
  }
  return null;
}

/** True when `subnet` lies inside `network` (both CIDR strings). */
export function subnetInNetwork(subnet: string, network: string): boolean {
  const s = parseCidr4(subnet);
  const n = parseCidr4(network);
  return s !== null && n !== null && s.prefix >= n.prefix && containsIPv4(n, s.ip);
}

/** The lease a node announces, or null when it is no flannel/weft node yet (no podCIDR or annotations). */
export function nodeToLease(node: KubeNode, prefix: string): Lease | null {
  const k = annotationKeys(prefix);
  const a = node.metadata?.annotations ?? {};
  if (a[k.subnetManager] !== 'true') return null;
  const subnet = nodePodCidr4(node);
  const backendType = a[k.backendType];
  const publicIp = a[k.publicIp];
  if (subnet === null || !backendType || !publicIp) return null;
  let backendData: BackendData = {};
  try {
    const d = JSON.parse(a[k.backendData] ?? 'null') as unknown;
    if (d !== null && typeof d === 'object' && !Array.isArray(d)) backendData = d as BackendData;
  } catch {
    return null;
  }
  return { subnet, publicIp, backendType, backendData, expiration: 0 };
}

/** The annotations this node publishes (flanneld's values: backend-data as compact JSON, "null" when empty). */
export function leaseAnnotations(prefix: string, l: { publicIp: string; backendType: string; backendData: BackendData }): Record<string, string> {
  const k = annotationKeys(prefix);
  return {
    [k.backendData]: Object.keys(l.backendData).length > 0 ? JSON.stringify(l.backendData) : 'null',
    [k.backendType]: l.backendType,
    [k.subnetManager]: 'true',
    [k.publicIp]: l.publicIp,
  };
}

// flannel's Kubernetes subnet manager wire format: a node's lease is its spec.podCIDR(s) plus the
// annotations flanneld writes under the prefix (default flannel.alpha.coreos.com/): backend-type,
// backend-data (compact JSON), public-ip and kube-subnet-manager="true"; dual stack adds
// public-ipv6 and backend-v6-data beside the IPv6 entry of spec.podCIDRs. Pure (no I/O).
import { canonicalCidr, cidrContains, formatCidr, parseCidr } from '../../../lib/ip/cidr.ts';
import { formatIp, parseIp } from '../../../lib/ip/addr.ts';
import { type BackendData, type Lease, NO_IPV4_ADDRESS, NO_IPV4_SUBNET } from '../store.ts';

/** flanneld's default --kube-annotation-prefix. */
export const DEFAULT_ANNOTATION_PREFIX = 'flannel.alpha.coreos.com';

/** The parts of a v1 Node weftd reads. */
export interface KubeNode {
  metadata?: { name?: string; annotations?: Record<string, string> | null; resourceVersion?: string };
  spec?: { podCIDR?: string; podCIDRs?: string[] | null };
}

/** The annotation names weftd reads and writes. */
export interface AnnotationKeys {
  backendType: string;
  backendData: string;
  backendV6Data: string;
  publicIp: string;
  publicIpv6: string;
  subnetManager: string;
  /** User input (k3s --flannel-external-ip, NAT'd nodes): published as public-ip instead of the node's own address. */
  publicIpOverwrite: string;
  publicIpv6Overwrite: string;
}

/**
 * The annotation names under a prefix, joined as flanneld joins them (pkg/subnet/kube/annotations.go):
 * "example.com" -> "example.com/backend-type", "example.com/" the same, "example.com/weft" ->
 * "example.com/weft-backend-type". Validity of the prefix is checked by the flags (open-store.ts).
 */
export function annotationKeys(prefix: string): AnnotationKeys {
  let p = prefix.includes('/') ? prefix : `${prefix}/`;
  if (!p.endsWith('/') && !p.endsWith('-')) p += '-';
  return {
    backendType: `${p}backend-type`, backendData: `${p}backend-data`, backendV6Data: `${p}backend-v6-data`,
    publicIp: `${p}public-ip`, publicIpv6: `${p}public-ipv6`, subnetManager: `${p}kube-subnet-manager`,
    publicIpOverwrite: `${p}public-ip-overwrite`, publicIpv6Overwrite: `${p}public-ipv6-overwrite`,
  };
}

/** The node's pod CIDR of one family in network form (spec.podCIDRs first, then spec.podCIDR), or null. */
export function nodePodCidr(node: KubeNode, family: 4 | 6): string | null {
  const cidrs = [...(node.spec?.podCIDRs ?? []), ...(node.spec?.podCIDR ? [node.spec.podCIDR] : [])];
  for (const c of cidrs) {
    const p = parseCidr(c);
    if (p && p.addr.family === family) return formatCidr(canonicalCidr(p));
  }
  return null;
}

/** The node's IPv4 pod CIDR in network form, or null. */
export function nodePodCidr4(node: KubeNode): string | null {
  return nodePodCidr(node, 4);
}

/** True when `subnet` lies inside `network` (CIDR strings of one family). */
export function subnetInNetwork(subnet: string, network: string): boolean {
  const s = parseCidr(subnet);
  const n = parseCidr(network);
  return s !== null && n !== null && s.addr.family === n.addr.family && s.prefix >= n.prefix && cidrContains(n, s.addr);
}

/** Backend data from an annotation: {} for absent or "null", undefined when it is not a JSON object. */
function parseBackendData(text: string | undefined): BackendData | undefined {
  try {
    const d = JSON.parse(text ?? 'null') as unknown;
    if (d === null) return {};
    return typeof d === 'object' && !Array.isArray(d) ? d as BackendData : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The lease a node announces, or null when it is no flannel/weft node yet (no IPv4 podCIDR or
 * annotations) or its backend data is not JSON. The IPv6 side is added when the node has an IPv6
 * podCIDR and a valid public-ipv6 annotation; a broken backend-v6-data drops only that side.
 */
export function nodeToLease(node: KubeNode, prefix: string, ipv6Only = false): Lease | null {
  const k = annotationKeys(prefix);
  const a = node.metadata?.annotations ?? {};
  if (a[k.subnetManager] !== 'true') return null;
  if (ipv6Only) return nodeToLeaseV6Only(node, k);
  const subnet = nodePodCidr(node, 4);
  const backendType = a[k.backendType];
  const publicIp = a[k.publicIp];
  // An empty backend-type is kept: flanneld's udp backend publishes none (its attrs carry no type).
  if (subnet === null || backendType === undefined || !publicIp) return null;
  const backendData = parseBackendData(a[k.backendData]);
  if (backendData === undefined) return null;
  const lease: Lease = { subnet, publicIp, backendType, backendData, expiration: 0 };
  const ipv6Subnet = nodePodCidr(node, 6);
  const publicIpv6 = a[k.publicIpv6];
  const v6Data = parseBackendData(a[k.backendV6Data]);
  if (ipv6Subnet !== null && publicIpv6 && parseIp(publicIpv6)?.family === 6 && v6Data !== undefined) {
    Object.assign(lease, { ipv6Subnet, publicIpv6, backendV6Data: v6Data });
  }
  return lease;
}

/**
 * The attributes a node publishes once its public-ip-overwrite / public-ipv6-overwrite annotations
 * are applied, as flanneld's kube subnet manager applies them: a non-empty overwrite replaces the
 * published public-ip (public-ipv6) and nothing else. The node itself keeps its own address (its
 * VTEP's local address, its host-gw checks); only peers send to the overwrite (FDB dst, host-gw
 * gateway), so the address must reach this node, e.g. through a 1:1 NAT. flanneld copies any text;
 * weftd refuses one that is not an address of the family, naming the annotation, before writing.
 */
export function applyPublicIpOverwrite(node: KubeNode, prefix: string, l: PublishedAttrs): PublishedAttrs {
  const k = annotationKeys(prefix);
  const a = node.metadata?.annotations ?? {};
  const out: PublishedAttrs = { ...l };
  const v4 = a[k.publicIpOverwrite];
  if (v4 !== undefined && v4 !== '') {
    const ip = parseIp(v4);
    if (ip === null || ip.family !== 4) throw new Error(`node annotation ${k.publicIpOverwrite}=${JSON.stringify(v4)} is not an IPv4 address`);
    out.publicIp = formatIp(ip);
  }
  const v6 = a[k.publicIpv6Overwrite];
  if (l.publicIpv6 !== undefined && v6 !== undefined && v6 !== '') {
    const ip = parseIp(v6);
    if (ip === null || ip.family !== 6) throw new Error(`node annotation ${k.publicIpv6Overwrite}=${JSON.stringify(v6)} is not an IPv6 address`);
    out.publicIpv6 = formatIp(ip);
  }
  return out;
}

/**
 * An IPv6-only cluster's lease of a node (EnableIPv4 false): the IPv6 podCIDR, public-ipv6 and
 * backend-v6-data alone, as flanneld reads them then; the IPv4 side is flannel's zero one.
 */
function nodeToLeaseV6Only(node: KubeNode, k: AnnotationKeys): Lease | null {
  const a = node.metadata?.annotations ?? {};
  const ipv6Subnet = nodePodCidr(node, 6);
  const publicIpv6 = a[k.publicIpv6];
  const backendType = a[k.backendType];
  const v6Data = parseBackendData(a[k.backendV6Data]);
  const ip = parseIp(publicIpv6 ?? '');
  if (ipv6Subnet === null || backendType === undefined || ip === null || ip.family !== 6 || v6Data === undefined) return null;
  return { subnet: NO_IPV4_SUBNET, publicIp: NO_IPV4_ADDRESS, backendType, backendData: {}, expiration: 0, ipv6Subnet, publicIpv6: formatIp(ip), backendV6Data: v6Data };
}

/** What a node publishes: its attributes, with the IPv6 side only in dual stack. */
export interface PublishedAttrs {
  publicIp: string;
  backendType: string;
  backendData: BackendData;
  publicIpv6?: string;
  backendV6Data?: BackendData;
}

const compact = (d: BackendData | undefined): string => (d && Object.keys(d).length > 0 ? JSON.stringify(d) : 'null');

/** The annotations this node publishes (flanneld's values: backend data as compact JSON, "null" when empty). */
export function leaseAnnotations(prefix: string, l: PublishedAttrs, ipv6Only = false): Record<string, string> {
  const k = annotationKeys(prefix);
  if (ipv6Only) {
    // flanneld's IPv6-only node: no IPv4 backend data; vxlan then writes neither it nor public-ip,
    // the other backends "null" and the zero address.
    const v4 = l.backendType === 'vxlan' ? {} : { [k.backendData]: 'null', [k.publicIp]: NO_IPV4_ADDRESS };
    return { ...v4, [k.backendType]: l.backendType, [k.subnetManager]: 'true', [k.backendV6Data]: compact(l.backendV6Data), [k.publicIpv6]: l.publicIpv6 ?? '' };
  }
  const out: Record<string, string> = {
    [k.backendData]: compact(l.backendData),
    [k.backendType]: l.backendType,
    [k.subnetManager]: 'true',
    [k.publicIp]: l.publicIp,
  };
  if (l.publicIpv6 !== undefined) {
    out[k.backendV6Data] = compact(l.backendV6Data);
    out[k.publicIpv6] = l.publicIpv6;
  }
  return out;
}

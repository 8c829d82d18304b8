// The parts of NetworkPolicy, Pod and Namespace objects the policy controller keeps (trimmed on
// arrival, so that a cluster-wide pod cache costs little memory) and their decoding. Pure.
import { formatIp, normalizeIp, parseIp } from '../../lib/ip/addr.ts';

/** metav1.LabelSelector. An empty selector selects everything; an absent one (in a peer) is "not given". */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** networking.k8s.io/v1 NetworkPolicyPort. */
export interface PolicyPort {
  protocol?: string;
  port?: number | string;
  endPort?: number;
}

/** networking.k8s.io/v1 NetworkPolicyPeer. */
export interface PolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}

/** One ingress or egress rule: peers (`from`/`to`) and ports; absent lists mean "all". */
export interface PolicyRule {
  peers?: PolicyPeer[];
  ports?: PolicyPort[];
}

/** A NetworkPolicy as the controller uses it. */
export interface Policy {
  namespace: string;
  name: string;
  podSelector: LabelSelector;
  ingress: PolicyRule[];
  egress: PolicyRule[];
  /** Effective policyTypes (defaulted as the API server does). */
  types: { ingress: boolean; egress: boolean };
}

/** A named container port of a pod. */
export interface NamedPort {
  name: string;
  port: number;
  protocol: string;
}

/** A pod as the controller keeps it: only running, addressed, non-host-network pods matter. */
export interface PodInfo {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  /** Pod addresses, IPv4 and IPv6, in canonical text. */
  ips: string[];
  hostIP?: string;
  ports: NamedPort[];
}

/** A namespace's labels (with kubernetes.io/metadata.name, as the API server adds it). */
export type NamespaceLabels = ReadonlyMap<string, Record<string, string>>;

interface RawMeta { metadata?: { name?: string; namespace?: string; labels?: Record<string, string> } }

/** Pod object -> PodInfo, or undefined when the pod has no part in policy (host network, finished, unaddressed). */
export function trimPod(raw: unknown): PodInfo | undefined {
  const o = raw as RawMeta & {
    spec?: { hostNetwork?: boolean; containers?: { ports?: { name?: string; containerPort?: number; protocol?: string }[] }[] };
    status?: { phase?: string; podIP?: string; podIPs?: { ip?: string }[]; hostIP?: string };
  };
  if (o.spec?.hostNetwork === true) return undefined;
  const phase = o.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return undefined;
  const all = [...(o.status?.podIPs ?? []).map((x) => x.ip), o.status?.podIP].filter((x): x is string => typeof x === 'string' && x !== '');
  const ips = [...new Set(all.flatMap((ip) => { const a = parseIp(ip); return a === null ? [] : [formatIp(normalizeIp(a))]; }))];
  if (ips.length === 0) return undefined;
  const ports: NamedPort[] = [];
  for (const c of o.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      if (typeof p.name === 'string' && p.name !== '' && typeof p.containerPort === 'number') ports.push({ name: p.name, port: p.containerPort, protocol: (p.protocol ?? 'TCP').toUpperCase() });
    }
  }
  return {
    namespace: o.metadata?.namespace ?? 'default', name: o.metadata?.name ?? '', labels: { ...(o.metadata?.labels ?? {}) }, ips,
    ...(o.status?.hostIP !== undefined ? { hostIP: o.status.hostIP } : {}), ports,
  };
}

/** Namespace object -> its labels, kubernetes.io/metadata.name included. */
export function namespaceLabels(raw: unknown): { name: string; labels: Record<string, string> } {
  const o = raw as RawMeta;
  const name = o.metadata?.name ?? '';
  return { name, labels: { ...(o.metadata?.labels ?? {}), 'kubernetes.io/metadata.name': name } };
}

/** NetworkPolicy object -> Policy, policyTypes defaulted (Ingress always, Egress when egress rules exist). */
export function trimPolicy(raw: unknown): Policy {
  const o = raw as RawMeta & { spec?: { podSelector?: LabelSelector; ingress?: { from?: PolicyPeer[]; ports?: PolicyPort[] }[]; egress?: { to?: PolicyPeer[]; ports?: PolicyPort[] }[]; policyTypes?: string[] } };
  const spec = o.spec ?? {};
  const ingress = (spec.ingress ?? []).map((r) => ({ ...(r.from !== undefined ? { peers: r.from } : {}), ...(r.ports !== undefined ? { ports: r.ports } : {}) }));
  const egress = (spec.egress ?? []).map((r) => ({ ...(r.to !== undefined ? { peers: r.to } : {}), ...(r.ports !== undefined ? { ports: r.ports } : {}) }));
  const given = spec.policyTypes;
  const types = given !== undefined && given.length > 0
    ? { ingress: given.includes('Ingress'), egress: given.includes('Egress') }
    : { ingress: true, egress: egress.length > 0 };
  return { namespace: o.metadata?.namespace ?? 'default', name: o.metadata?.name ?? '', podSelector: spec.podSelector ?? {}, ingress, egress, types };
}

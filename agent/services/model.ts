// Services + EndpointSlices -> one unit per (Service, port, family): the addresses it answers on and
// the endpoints internal and external traffic go to, with kube-proxy's traffic-policy rules. Pure.
import { createHash } from 'node:crypto';
import { familyOfText, formatIp, parseIp } from '../../lib/ip/index.ts';
import { categorize, portBackends, type Backend } from './endpoints.ts';
import type { EndpointSlice, ProxyNodeConfig, Service } from './types.ts';

/** kube-proxy's default ClientIP affinity timeout (10800 s). */
export const DEFAULT_AFFINITY_SECONDS = 10_800;

/** One Service port in one family, as the data plane programs it. */
export interface ServicePortUnit {
  /** 'namespace/name/portName/proto/family' (stable; the readable name in listings). */
  key: string;
  /** Short stable id from the key: chain and map names. */
  id: string;
  family: 4 | 6;
  proto: 'tcp' | 'udp';
  port: number;
  clusterIP?: string;
  /** externalIPs and LoadBalancer ingress IPs of this family. */
  externalAddrs: string[];
  nodePort?: number;
  /** ETP Local LoadBalancer: the port kube-proxy answers health checks on for this Service. */
  healthCheckNodePort?: number;
  affinitySeconds?: number;
  etpLocal: boolean;
  itpLocal: boolean;
  /** Endpoints for traffic from inside the cluster (the ITP choice). */
  internal: Backend[];
  /** Endpoints for traffic to external addresses and NodePorts (the ETP choice). */
  external: Backend[];
  /** The cluster-wide choice (ETP Local's short-circuit for in-cluster sources goes there). */
  cluster: Backend[];
  /** Any usable endpoint anywhere: none means reject; some but none for a policy means drop. */
  hasEndpoints: boolean;
}

/** A short id for a unit key (64 bits of SHA-256, hex), so names stay under nft's length limit. */
export function unitId(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** An IP in nft's (and inet_ntop's) text form, or undefined when it is not an IP of `family`. */
export function canonicalIp(s: string, family?: 4 | 6): string | undefined {
  const a = parseIp(s);
  if (a === null || (family !== undefined && a.family !== family)) return undefined;
  return formatIp(a);
}

function protoOf(p: string | undefined): 'tcp' | 'udp' | undefined {
  const u = (p ?? 'TCP').toUpperCase();
  return u === 'TCP' ? 'tcp' : u === 'UDP' ? 'udp' : undefined; // SCTP: no SCTP on this kernel (docs/services.md)
}

/** The families a Service has ClusterIPs in, each with its ClusterIP; empty for headless and ExternalName. */
function clusterIPs(svc: Service): Map<4 | 6, string> {
  const out = new Map<4 | 6, string>();
  const spec = svc.spec ?? {};
  if (spec.type === 'ExternalName') return out;
  for (const ip of spec.clusterIPs ?? (spec.clusterIP !== undefined ? [spec.clusterIP] : [])) {
    if (ip === 'None' || ip === '') continue;
    const c = canonicalIp(ip);
    if (c !== undefined && !out.has(familyOfText(c))) out.set(familyOfText(c), c);
  }
  return out;
}

/** Every unit of one Service (sorted by key), given its EndpointSlices. */
export function serviceUnits(svc: Service, slices: readonly EndpointSlice[], node: ProxyNodeConfig): ServicePortUnit[] {
  const spec = svc.spec ?? {};
  const ns = svc.metadata.namespace ?? '';
  const type = spec.type ?? 'ClusterIP';
  const out: ServicePortUnit[] = [];
  const affinity = spec.sessionAffinity === 'ClientIP' ? (spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_AFFINITY_SECONDS) : undefined;
  const lbIPs = type === 'LoadBalancer' ? (svc.status?.loadBalancer?.ingress ?? []).filter((i) => i.ipMode !== 'Proxy').map((i) => i.ip ?? '') : [];
  const etpLocal = spec.externalTrafficPolicy === 'Local' && (type === 'NodePort' || type === 'LoadBalancer' || (spec.externalIPs ?? []).length > 0);
  for (const [family, clusterIP] of clusterIPs(svc)) {
    const externalAddrs = [...new Set([...(spec.externalIPs ?? []), ...lbIPs].map((a) => canonicalIp(a, family)).filter((a): a is string => a !== undefined))].sort();
    for (const sp of spec.ports ?? []) {
      const proto = protoOf(sp.protocol);
      if (proto === undefined || !Number.isInteger(sp.port) || sp.port < 1 || sp.port > 65535) continue;
      const key = `${ns}/${svc.metadata.name}/${sp.name ?? ''}/${proto}/${family === 4 ? 'v4' : 'v6'}`;
      const { cluster, local } = categorize(portBackends(slices, sp, family, node.nodeName));
      const itpLocal = spec.internalTrafficPolicy === 'Local';
      const nodePort = (type === 'NodePort' || type === 'LoadBalancer') && sp.nodePort !== undefined && sp.nodePort > 0 ? sp.nodePort : undefined;
      out.push({
        key, id: unitId(key), family, proto, port: sp.port, clusterIP, externalAddrs,
        ...(nodePort !== undefined ? { nodePort } : {}),
        ...(etpLocal && type === 'LoadBalancer' && (spec.healthCheckNodePort ?? 0) > 0 ? { healthCheckNodePort: spec.healthCheckNodePort } : {}),
        // IPv6: nft 1.0.6 aborts on a dynamic-map update with IPv6 data (netlink_linearize assertion), so v6 has no affinity yet (docs/services.md).
        ...(affinity !== undefined && family === 4 ? { affinitySeconds: Math.max(1, Math.min(86_400, affinity)) } : {}),
        etpLocal, itpLocal,
        internal: itpLocal ? local : cluster,
        external: etpLocal ? local : cluster,
        cluster,
        hasEndpoints: cluster.length > 0 || local.length > 0,
      });
    }
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : 1));
}

/** Every unit of the cluster, from the informers' current lists. */
export function allUnits(services: Iterable<Service>, slicesOf: (svcKey: string) => readonly EndpointSlice[], node: ProxyNodeConfig): ServicePortUnit[] {
  const out: ServicePortUnit[] = [];
  for (const s of services) out.push(...serviceUnits(s, slicesOf(`${s.metadata.namespace ?? ''}/${s.metadata.name}`), node));
  return out;
}

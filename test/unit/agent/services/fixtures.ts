// Small Service/EndpointSlice builders for the Service proxy's unit tests.
import type { EndpointSlice, ProxyNodeConfig, Service, ServicePortSpec, SliceEndpoint } from '../../../../agent/services/types.ts';

export const NODE: ProxyNodeConfig = { nodeName: 'n1', clusterCidrs: ['10.244.0.0/16'], nodePortAddresses: [] };

/** A Service in namespace 'default'. */
export function svc(name: string, spec: NonNullable<Service['spec']>, status?: Service['status']): Service {
  return { metadata: { name, namespace: 'default' }, spec, ...(status ? { status } : {}) };
}

/** A TCP port. */
export function port(name: string, p: number, extra: Partial<ServicePortSpec> = {}): ServicePortSpec {
  return { name, port: p, protocol: 'TCP', ...extra };
}

/** A ready endpoint on `node`. */
export function ep(ip: string, node = 'n2', conditions: SliceEndpoint['conditions'] = { ready: true }): SliceEndpoint {
  return { addresses: [ip], nodeName: node, conditions };
}

/** An EndpointSlice of Service `svcName`. */
export function slice(name: string, svcName: string, endpoints: SliceEndpoint[], ports: { name: string; port: number; protocol?: string }[], addressType = 'IPv4'): EndpointSlice {
  return { metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': svcName } }, addressType, endpoints, ports: ports.map((p) => ({ protocol: 'TCP', ...p })) };
}

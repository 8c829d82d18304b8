// Services, EndpointSlices and Node addresses through a test's kube-apiserver, as a controller
// manager and kubelet would leave them (the tests make EndpointSlices themselves; no selector).
import type { KubeApiServer } from './kube-apiserver.ts';

/** An endpoint of a test EndpointSlice. */
export interface TestEndpoint {
  ip: string;
  nodeName: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

/** The Service as the API server allocated it. */
export interface CreatedService {
  name: string;
  clusterIP: string;
  nodePorts: Record<string, number>;
  healthCheckNodePort?: number;
}

/** Sets each Node's status.addresses (InternalIP), which kube-proxy reads its node IPs from. */
export async function setNodeAddresses(kube: KubeApiServer, nodes: { netns: string; ip: string }[]): Promise<void> {
  for (const n of nodes) {
    await kube.call('PATCH', `/api/v1/nodes/${n.netns}/status`, { status: { addresses: [{ type: 'InternalIP', address: n.ip }, { type: 'Hostname', address: n.netns }] } }, 'application/merge-patch+json');
  }
}

/** Creates a Service without selector in namespace default; `spec` is merged over a ClusterIP default. */
export async function createService(kube: KubeApiServer, name: string, spec: Record<string, unknown>): Promise<CreatedService> {
  const o = await kube.call('POST', '/api/v1/namespaces/default/services', { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec });
  const s = o.spec as { clusterIP: string; ports: { name?: string; nodePort?: number }[]; healthCheckNodePort?: number };
  return {
    name, clusterIP: s.clusterIP,
    nodePorts: Object.fromEntries(s.ports.filter((p) => p.nodePort !== undefined).map((p) => [p.name ?? '', p.nodePort as number])),
    ...(s.healthCheckNodePort !== undefined ? { healthCheckNodePort: s.healthCheckNodePort } : {}),
  };
}

/** Deletes a Service. */
export async function deleteService(kube: KubeApiServer, name: string): Promise<void> {
  await kube.call('DELETE', `/api/v1/namespaces/default/services/${name}`);
}

function sliceBody(endpoints: TestEndpoint[], ports: { name: string; port: number; protocol?: string }[]): Record<string, unknown> {
  return {
    endpoints: endpoints.map((e) => ({ addresses: [e.ip], nodeName: e.nodeName, conditions: { ready: e.ready ?? true, serving: e.serving ?? e.ready ?? true, terminating: e.terminating ?? false } })),
    ports: ports.map((p) => ({ name: p.name, port: p.port, protocol: p.protocol ?? 'TCP' })),
  };
}

/** Creates EndpointSlice `name` of Service `svc` (IPv4). */
export async function createSlice(kube: KubeApiServer, name: string, svc: string, endpoints: TestEndpoint[], ports: { name: string; port: number; protocol?: string }[]): Promise<void> {
  await kube.call('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: 'IPv4',
    metadata: { name, labels: { 'kubernetes.io/service-name': svc, 'endpointslice.kubernetes.io/managed-by': 'weft-test' } },
    ...sliceBody(endpoints, ports),
  });
}

/** Replaces the endpoints and ports of EndpointSlice `name` (a merge patch replaces lists whole). */
export async function updateSlice(kube: KubeApiServer, name: string, endpoints: TestEndpoint[], ports: { name: string; port: number; protocol?: string }[]): Promise<void> {
  await kube.call('PATCH', `/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/${name}`, sliceBody(endpoints, ports), 'application/merge-patch+json');
}

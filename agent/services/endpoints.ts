// Which endpoints of a Service port take traffic, as kube-proxy decides it (pkg/proxy/topology.go
// CategorizeEndpoints, without topology hints): ready ones, else serving-and-terminating ones. Pure.
import { SERVICE_NAME_LABEL, type EndpointSlice, type ServicePortSpec } from './types.ts';

/** One endpoint address and port of a Service port. */
export interface Backend {
  ip: string;
  port: number;
  /** On this node (the endpoint's nodeName is ours). */
  local: boolean;
  ready: boolean;
  /** Serving while terminating: used only when no endpoint of the set is ready. */
  servingTerminating: boolean;
}

/** The endpoints of one Service port in one family, from its EndpointSlices (addresses[0] of each, deduplicated by ip:port as kube-proxy does). */
export function portBackends(slices: readonly EndpointSlice[], sp: ServicePortSpec, family: 4 | 6, nodeName: string): Backend[] {
  const want = sp.name ?? '';
  const proto = (sp.protocol ?? 'TCP').toUpperCase();
  const seen = new Map<string, Backend>();
  for (const s of slices) {
    if (s.addressType !== (family === 4 ? 'IPv4' : 'IPv6')) continue;
    const p = (s.ports ?? []).find((x) => (x.name ?? '') === want && (x.protocol ?? 'TCP').toUpperCase() === proto);
    if (p === undefined || typeof p.port !== 'number' || p.port < 1 || p.port > 65535) continue;
    for (const e of s.endpoints ?? []) {
      const ip = e.addresses[0];
      if (ip === undefined) continue;
      const c = e.conditions ?? {};
      // nil ready means ready; nil serving means "as ready"; nil terminating means not terminating.
      const ready = c.ready !== false;
      const serving = c.serving ?? ready;
      const terminating = c.terminating === true;
      const b: Backend = { ip, port: p.port, local: e.nodeName === nodeName, ready, servingTerminating: serving && terminating };
      const k = `${ip}|${p.port}`;
      const prev = seen.get(k);
      // The same address in two slices (a slice being replaced): the better condition wins.
      if (prev === undefined || (!prev.ready && b.ready)) seen.set(k, b);
    }
  }
  return [...seen.values()].sort((a, b) => (a.ip === b.ip ? a.port - b.port : a.ip < b.ip ? -1 : 1));
}

/** Ready endpoints; when none is ready, the serving-terminating ones (kube-proxy's ProxyTerminatingEndpoints). */
export function usable(bs: readonly Backend[]): Backend[] {
  const ready = bs.filter((b) => b.ready);
  return ready.length > 0 ? ready : bs.filter((b) => b.servingTerminating);
}

/** The cluster-wide and node-local endpoint choices of a Service port. */
export function categorize(bs: readonly Backend[]): { cluster: Backend[]; local: Backend[] } {
  return { cluster: usable(bs), local: usable(bs.filter((b) => b.local)) };
}

/** Groups EndpointSlices by their Service ('namespace/name'); slices without the service-name label are ignored. */
export function slicesByService(slices: Iterable<EndpointSlice>): Map<string, EndpointSlice[]> {
  const out = new Map<string, EndpointSlice[]>();
  for (const s of slices) {
    const svc = s.metadata.labels?.[SERVICE_NAME_LABEL];
    if (svc === undefined || svc === '') continue;
    const k = `${s.metadata.namespace ?? ''}/${svc}`;
    const list = out.get(k);
    if (list) list.push(s);
    else out.set(k, [s]);
  }
  return out;
}

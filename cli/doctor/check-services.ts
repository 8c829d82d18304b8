// Check "services": weftd --service-proxy's table (inet weft-svc) against the Services and
// EndpointSlices of the API: every Service address, NodePort and reject/drop entry the API calls for
// is in its map with the right verdict, nothing stale is left, and each Service port's endpoint map
// holds exactly its usable endpoints. The comparison is pure; reading the table and the API runs in
// the node's netns, with the API reached through $KUBECONFIG or the in-cluster environment.
import { KubeClient } from '../../agent/kube/client.ts';
import { resolveKubeConn } from '../../agent/kube/config.ts';
import { DYNAMIC_MAPS, type KernelContent } from '../../agent/services/content.ts';
import { slicesByService } from '../../agent/services/endpoints.ts';
import { readSvcTable } from '../../agent/services/kernel.ts';
import { FIXED_CHAINS } from '../../agent/services/skeleton.ts';
import { sharedSlotsName } from '../../agent/services/slots.ts';
import { allUnits } from '../../agent/services/model.ts';
import { renderAll } from '../../agent/services/render.ts';
import type { EndpointSlice, ProxyNodeConfig, Service } from '../../agent/services/types.ts';
import { WEFTD_FIXES, type CheckResult, type Problem } from './problem.ts';

const CHECK = 'services';
const FIXED = new Set<string>(FIXED_CHAINS);
/** More differences than this are summed up in one last problem. */
const MAX_PROBLEMS = 20;

/** What the comparison reads. */
export interface ServicesCheckInput {
  table: KernelContent;
  services: readonly Service[];
  slices: readonly EndpointSlice[];
  /** This node's name (NODE_NAME, as weftd has it): the Local traffic policies depend on it. */
  nodeName: string;
  /** The cluster networks (net-conf Network, IPv6Network) weftd masquerades by; unknown: chains' rules are not compared. */
  clusterCidrs?: string[];
}

/** Compares the table with what the API's objects call for. Pure. */
export function compareServiceTable(i: ServicesCheckInput): CheckResult {
  const node: ProxyNodeConfig = { nodeName: i.nodeName, clusterCidrs: i.clusterCidrs ?? [], nodePortAddresses: [] };
  const bySvc = slicesByService(i.slices);
  const units = allUnits(i.services, (k) => bySvc.get(k) ?? [], node);
  const want = renderAll(units, node);
  // weftd keeps a capacity while the count stays within [c/2, c]: n endpoints, n a power of two, may sit in 2n slots.
  const alt = renderAll(units, node, new Map([...want.epMaps].filter(([, m]) => m.capacity === m.endpoints.length).map(([n, m]) => [n, m.capacity * 2])));
  const unitOf = new Map(units.flatMap((u) => [[u.id, u.key], ...(u.clusterIP !== undefined ? [[sharedSlotsName(u.family, u.proto, u.clusterIP, u.port), u.key]] : [])] as Array<[string, string]>));
  const who = (name: string) => unitOf.get(name) ?? unitOf.get(name.replace(/^[a-z]+-/, '')) ?? name;
  const problems: Problem[] = [];
  const add = (detail: string) => problems.push({ check: CHECK, detail, fix: `${WEFTD_FIXES}; run doctor again first: the API may have changed between the two reads` });
  for (const map of Object.keys(DYNAMIC_MAPS) as Array<keyof typeof DYNAMIC_MAPS>) {
    const w = want.elements.get(map) ?? new Map<string, string>();
    const h = i.table.elements.get(map) ?? new Map<string, string>();
    for (const [k, v] of w) {
      const got = h.get(k);
      if (got === undefined) add(`${k} is missing from map ${map} (wanted: ${v.replace(/^goto /, '')})`);
      else if (got !== v && got !== alt.elements.get(map)?.get(k)) add(`${k} in map ${map} says ${got}, the API calls for ${v}`);
    }
    for (const [k, v] of h) if (!w.has(k)) add(`${k} in map ${map} (${v}) belongs to no Service of the API: stale`);
  }
  let endpoints = 0;
  for (const [name, m] of want.epMaps) {
    endpoints += m.endpoints.length;
    const held = i.table.epMaps.get(name);
    if (held === undefined) {
      add(`${who(name)}: endpoint map ${name} is missing (${m.endpoints.length} endpoints wanted)`);
      continue;
    }
    const have = [...held.values()];
    const missing = m.endpoints.filter((e) => !have.includes(e));
    const extra = have.filter((e) => !m.endpoints.includes(e));
    const holes = [...held.keys()].filter((s) => s >= m.endpoints.length);
    if (missing.length + extra.length + holes.length > 0) {
      add(`${who(name)}: endpoints differ in ${name}: missing ${missing.slice(0, 3).join(', ') || 'none'}${missing.length > 3 ? ` (+${missing.length - 3})` : ''}; not usable any more ${extra.slice(0, 3).join(', ') || 'none'}${extra.length > 3 ? ` (+${extra.length - 3})` : ''}${holes.length > 0 ? `; slots beyond the count: ${holes.length}` : ''}`);
    }
  }
  for (const name of i.table.epMaps.keys()) if (!want.epMaps.has(name)) add(`endpoint map ${name} belongs to no Service port of the API: stale`);
  if (i.clusterCidrs !== undefined) {
    for (const [name, c] of want.chains) {
      const got = i.table.chains.get(name);
      if (got === undefined) add(`${who(name)}: chain ${name} is missing`);
      else if (got !== c.comment && got !== alt.chains.get(name)?.comment) add(`${who(name)}: the rules of chain ${name} differ from what the API calls for`);
    }
    for (const name of i.table.chains.keys()) if (!FIXED.has(name) && !want.chains.has(name)) add(`chain ${name} belongs to no Service port of the API: stale`);
  }
  const shown = problems.length > MAX_PROBLEMS ? [...problems.slice(0, MAX_PROBLEMS - 1), { ...problems[0]!, detail: `and ${problems.length - MAX_PROBLEMS + 1} more differences` }] : problems;
  return { check: CHECK, problems: shown, facts: { services: i.services.length, ports: units.length, endpoints, rules: i.clusterCidrs === undefined ? 'not compared (no net-conf)' : 'compared', differences: problems.length } };
}

/** Where the check gets the API's objects from (weft doctor: the kube client; tests: fixed lists). */
export type ListObjects = () => Promise<{ services: Service[]; slices: EndpointSlice[] }>;

/** The API's Services and EndpointSlices through $KUBECONFIG or the in-cluster environment. */
export async function listFromApi(env: NodeJS.ProcessEnv = process.env): Promise<{ services: Service[]; slices: EndpointSlice[] }> {
  const file = env.KUBECONFIG?.split(':')[0];
  const client = new KubeClient(await resolveKubeConn(file !== undefined && file !== '' ? { kubeconfigFile: file } : {}, env));
  const items = async <T>(path: string) => ((await client.call('GET', path)) as { items?: T[] }).items ?? [];
  return { services: await items<Service>('/api/v1/services'), slices: await items<EndpointSlice>('/apis/discovery.k8s.io/v1/endpointslices') };
}

/** How the check reads the node and the API (defaults: this process's environment, the kube API, the kernel). */
export interface ServicesCheckSources {
  env?: NodeJS.ProcessEnv;
  list?: ListObjects;
  read?: () => KernelContent | null;
  /** From the net-conf when doctor could read it. */
  clusterCidrs?: string[];
}

/** The check on this node: skipped without weft's Service table (no --service-proxy) or without the API. */
export async function checkServicesOnNode(src: ServicesCheckSources = {}): Promise<CheckResult> {
  const env = src.env ?? process.env;
  const list = src.list ?? (() => listFromApi(env));
  const read = src.read ?? (() => readSvcTable());
  let table: KernelContent | null;
  try {
    table = read();
  } catch (e) {
    return { check: CHECK, problems: [], facts: {}, skipped: `cannot list table inet weft-svc: ${(e as Error).message.split('\n')[0] ?? ''}` };
  }
  if (table === null) return { check: CHECK, problems: [], facts: {}, skipped: 'no table inet weft-svc: weftd runs without --service-proxy here' };
  const programmed = { svcMapElements: (table.elements.get('svc4')?.size ?? 0) + (table.elements.get('svc6')?.size ?? 0), endpointMaps: table.epMaps.size };
  const nodeName = env.NODE_NAME ?? '';
  if (nodeName === '') return { check: CHECK, problems: [], facts: programmed, skipped: 'NODE_NAME is not set (the node\'s name as weftd has it): cannot tell the Local traffic policies\' endpoints' };
  let objs: { services: Service[]; slices: EndpointSlice[] };
  try {
    objs = await list();
  } catch (e) {
    return { check: CHECK, problems: [], facts: programmed, skipped: `cannot read Services from the API (KUBECONFIG or the in-cluster environment): ${(e as Error).message.split('\n')[0] ?? ''}` };
  }
  return compareServiceTable({ table, ...objs, nodeName, ...(src.clusterCidrs !== undefined ? { clusterCidrs: src.clusterCidrs } : {}) });
}

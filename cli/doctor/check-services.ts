// Check "services": weftd --service-proxy's table (inet weft-svc) against the Services and
// EndpointSlices of the API: every Service address, NodePort and reject/drop entry the API calls for
// is in its map with the right verdict, nothing stale is left, and each Service port's endpoint map
// holds exactly its usable endpoints. The comparison is pure; reading the table and the API runs in
// the node's netns, with the API reached through $KUBECONFIG or the in-cluster environment.
import {
  allUnits, DYNAMIC_MAPS, FIXED_CHAINS, KubeClient, readSvcTable, renderAll, resolveKubeConn, sharedChainComments, slicesByService,
  type EndpointSlice, type KernelContent, type ProxyNodeConfig, type Service,
} from '../../agent/inspect.ts';
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
  const who = (name: string) => want.epMaps.get(name)?.unit ?? name;
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
    // The shared chains' rules hold the cluster networks; the affinity recorders' their timeout.
    const chains = new Map([...sharedChainComments(node), ...[...want.chains].map(([n, c]) => [n, c.comment] as [string, string])]);
    for (const [name, comment] of chains) {
      const got = i.table.chains.get(name);
      if (got === undefined) add(`chain ${name} is missing`);
      else if (got !== comment) add(`the rules of chain ${name} differ from what the node's cluster networks call for`);
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

// Starting weftd's Service proxy (in weftd's netns, the node's): refuse beside kube-proxy, connect to
// the API server, share the watch cache's Service and EndpointSlice informers, program the table.
import { KubeClient } from '../kube/client.ts';
import { resolveKubeConn } from '../kube/config.ts';
import { WatchCache } from '../kube/watch-cache.ts';
import type { AgentLog } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { ServiceProxyFlags } from './flags.ts';
import { HealthChecks } from './healthcheck.ts';
import { refuseBesideKubeProxy } from './kube-proxy-present.ts';
import { ServiceProxy } from './proxy.ts';
import { SLIM_SERVICE, SLIM_SLICE } from './slim.ts';
import type { EndpointSlice, Service } from './types.ts';

/** A running Service proxy with what it started. */
export interface RunningServiceProxy {
  proxy: ServiceProxy;
  stop(): void;
}

/** Full re-list of the table and full diff every 5 minutes (drift from other tools; the incremental path never lists). */
const RESYNC_MS = 300_000;

/**
 * Starts the proxy; resolves after the first full sync. `cache` is weftd's shared watch cache when it
 * has one; otherwise one is made from the --kubeconfig-file / --kube-api-url / in-cluster environment.
 */
export async function startServiceProxy(f: ServiceProxyFlags, clusterCidrs: string[], log: AgentLog, metrics: Metrics, cache?: WatchCache): Promise<RunningServiceProxy> {
  refuseBesideKubeProxy();
  let own: WatchCache | undefined;
  if (cache === undefined) {
    const conn = await resolveKubeConn({ ...(f.kubeconfigFile !== undefined ? { kubeconfigFile: f.kubeconfigFile } : {}), ...(f.kubeApiUrl !== undefined ? { kubeApiUrl: f.kubeApiUrl } : {}) });
    own = new WatchCache(new KubeClient(conn), { log });
  }
  const wc = cache ?? (own as WatchCache);
  const health = new HealthChecks(log);
  const proxy = new ServiceProxy({
    services: wc.informer<Service>({ path: '/api/v1/services', project: SLIM_SERVICE }),
    slices: wc.informer<EndpointSlice>({ path: '/apis/discovery.k8s.io/v1/endpointslices', project: SLIM_SLICE }),
    node: { nodeName: f.nodeName, clusterCidrs, nodePortAddresses: f.nodePortAddresses },
    log, metrics, resyncMs: RESYNC_MS,
    onUnits: (u) => health.update(u),
  });
  await proxy.start();
  log.info('service proxy running', { node: f.nodeName, nodePortAddresses: f.nodePortAddresses, clusterCidrs });
  return { proxy, stop: () => { proxy.stop(); health.stop(); own?.stop(); } };
}

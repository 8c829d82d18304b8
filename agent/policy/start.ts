// Starts weftd's NetworkPolicy enforcement (in weftd's netns, the node's) on weftd's shared watch
// cache. Imported dynamically by weftd, only with --network-policy.
import type { WatchCache } from '../kube/watch-cache.ts';
import type { AgentLog } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import { PolicyController } from './controller.ts';
import type { PodInfo } from './types.ts';

/** A running enforcement: stop() ends its subscriptions and leaves the table in place (the cache is weftd's). */
export interface NetworkPolicyHandle {
  controller: PolicyController;
  stop(): void;
}

/** Connects, lists, applies the first table; resolves once policy is enforced. */
export async function startNetworkPolicy(o: { cache: WatchCache; log: AgentLog; metrics: Metrics; nodeAddrs(): string[]; isLocal(p: PodInfo): boolean; viewFile?: string }): Promise<NetworkPolicyHandle> {
  const controller = new PolicyController({ cache: o.cache, log: o.log, metrics: o.metrics, nodeAddrs: o.nodeAddrs, isLocal: o.isLocal, ...(o.viewFile !== undefined ? { viewFile: o.viewFile } : {}) });
  try {
    await controller.start();
  } catch (e) {
    controller.stop();
    throw e;
  }
  return { controller, stop: () => { controller.stop(); } };
}

// Starts weftd's NetworkPolicy enforcement (in weftd's netns, the node's): the API connection as
// --kube-subnet-mgr resolves it, a watch cache, the controller. Imported dynamically by weftd, only
// with --network-policy.
import { KubeClient } from '../kube/client.ts';
import { resolveKubeConn, type KubeConnFlags } from '../kube/config.ts';
import { WatchCache } from '../kube/watch-cache.ts';
import type { AgentLog } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import { PolicyController } from './controller.ts';
import type { PodInfo } from './types.ts';

/** A running enforcement: stop() ends the watches and leaves the table in place. */
export interface NetworkPolicyHandle {
  controller: PolicyController;
  stop(): void;
}

/** Connects, lists, applies the first table; resolves once policy is enforced. */
export async function startNetworkPolicy(o: { kube: KubeConnFlags; log: AgentLog; metrics: Metrics; nodeAddrs(): string[]; isLocal(p: PodInfo): boolean }): Promise<NetworkPolicyHandle> {
  const client = new KubeClient(await resolveKubeConn(o.kube));
  const cache = new WatchCache(client, { log: o.log });
  const controller = new PolicyController({ cache, log: o.log, metrics: o.metrics, nodeAddrs: o.nodeAddrs, isLocal: o.isLocal });
  try {
    await controller.start();
  } catch (e) {
    cache.stop();
    client.close();
    throw e;
  }
  return { controller, stop: () => { controller.stop(); cache.stop(); client.close(); } };
}

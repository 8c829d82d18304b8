// weftd's Kubernetes controllers, each loaded only when its flag is given: the Service proxy
// (--service-proxy) and NetworkPolicy (--network-policy). They run in weftd's netns and share one
// watch cache: the kube lease store's, or one opened for them from their kube flags.
import type { UplinkV6 } from './backend/index.ts';
import type { KubeApi } from './kube/api.ts';
import type { KubeConnFlags } from './kube/config.ts';
import type { WatchCache } from './kube/watch-cache.ts';
import type { Lease, LeaseStore } from './lease/store.ts';
import type { Metrics } from './metrics.ts';
import { policyIsLocal, policyNodeAddrs } from './policy/node.ts';
import type { NetworkPolicyHandle } from './policy/start.ts';
import { policyViewPath } from './policy/state.ts';
import type { RunningServiceProxy } from './services/start.ts';
import type { Uplink } from './uplink.ts';
import type { WeftdOptions } from './weftd.ts';

/** The controllers weftd's flags ask for, started after the first pass and stopped with weftd. */
export class WeftdControllers {
  private services: RunningServiceProxy | undefined;
  private policy: NetworkPolicyHandle | undefined;
  /** The API connection the controllers share when the lease store is not the kube one. */
  private kube: KubeApi | undefined;

  constructor(private readonly o: WeftdOptions, private readonly store: LeaseStore) {}

  /** Starts the Service proxy, then NetworkPolicy, as the flags say; `own` is the current lease. */
  async start(metrics: Metrics, own: () => Lease, uplink: Uplink, uplink6: UplinkV6 | undefined): Promise<void> {
    const o = this.o;
    if (o.serviceProxy !== undefined) {
      const conf = this.store.netConf;
      const { startServiceProxy } = await import('./services/start.ts');
      const cache = await this.kubeCache(o.serviceProxy);
      this.services = await startServiceProxy(o.serviceProxy, [conf.network, conf.ipv6Network ?? ''].filter((n) => n !== ''), o.log, metrics, cache);
    }
    if (o.networkPolicy !== undefined) this.policy = await startPolicy(o, await this.kubeCache(o.networkPolicy), metrics, own, uplink, uplink6);
  }

  /** NetworkPolicy's health when it is not ok (it then decides /healthz), else undefined. */
  unhealthy(): { ok: boolean; detail: string } | undefined {
    const p = this.policy?.controller.health();
    return p !== undefined && !p.ok ? p : undefined;
  }

  stopPolicy(): void {
    this.policy?.stop();
  }

  /** Stops the Service proxy and closes the controllers' own API connection. */
  stopServices(): void {
    this.services?.stop();
    this.kube?.close();
  }

  /**
   * The one watch cache every controller reads (one list and watch per collection): the kube lease
   * store's with --kube-subnet-mgr, else one opened for the controllers from their kube flags.
   */
  private async kubeCache(flags: KubeConnFlags): Promise<WatchCache> {
    if (this.store.kubeApi !== undefined) return this.store.kubeApi.cache;
    if (this.kube === undefined) {
      const [{ openKubeApi }, { resolveKubeConn }] = await Promise.all([import('./kube/api.ts'), import('./kube/config.ts')]);
      this.kube = openKubeApi(await resolveKubeConn(flags), { log: this.o.log });
    }
    return this.kube.cache;
  }
}

/** Starts --network-policy (loaded only then): this node's addresses and pods follow the current lease. */
async function startPolicy(o: WeftdOptions, cache: WatchCache, metrics: Metrics, own: () => Lease, uplink: Uplink, uplink6: UplinkV6 | undefined): Promise<NetworkPolicyHandle> {
  const { startNetworkPolicy } = await import('./policy/start.ts');
  const v6 = () => ({ ...(own().ipv6Subnet !== undefined ? { subnet: own().ipv6Subnet } : {}), ...(uplink6 !== undefined ? { publicIp: uplink6.publicIp } : {}) });
  return startNetworkPolicy({ cache, log: o.log, metrics, nodeAddrs: () => policyNodeAddrs(own().subnet, uplink.publicIp, v6()), isLocal: (p) => policyIsLocal(p, own().subnet, uplink.publicIp, v6()), viewFile: policyViewPath(o.subnetFile) });
}

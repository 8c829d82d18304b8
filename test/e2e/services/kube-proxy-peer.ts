// kube-proxy as the ProxyUnderTest of the Service suite (one process per node namespace).
import type { ChildProcess } from 'node:child_process';
import { startKubeProxy, stopKubeProxy, type KubeProxyMode } from '../../../testkit/kube-proxy.ts';
import { serviceSuite } from './suite.ts';

/** Registers the suite for kube-proxy in `mode`. */
export function kubeProxySuite(mode: KubeProxyMode): void {
  const procs = new Map<string, ChildProcess>();
  serviceSuite({
    name: `kube-proxy ${mode}`,
    weftdArgs: [],
    start: async (c) => {
      for (const n of c.nodes) procs.set(n.netns, await startKubeProxy(c.topo, n, mode, c.kube!.kubeconfig, '10.244.0.0/16'));
    },
    restart: async (c, n) => {
      const p = procs.get(n.netns);
      if (p !== undefined) await stopKubeProxy(p);
      procs.set(n.netns, await startKubeProxy(c.topo, n, mode, c.kube!.kubeconfig, '10.244.0.0/16'));
    },
  });
}

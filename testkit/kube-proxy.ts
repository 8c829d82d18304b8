// The real kube-proxy v1.34.4 (scripts/kube-setup.sh builds it) on a node namespace of a test
// cluster, in nftables or iptables mode, with the settings this machine needs: no conntrack sysctls
// (a child netns may not set them, see kube-peers-notes), the node name of the namespace.
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KUBE_BIN_DIR } from './kube-apiserver.ts';
import { nsExec, type SimNode, type Topology } from './topology.ts';

/** The kube-proxy binary. */
export const KUBE_PROXY_BIN = join(KUBE_BIN_DIR, 'kube-proxy');

/** The proxy modes the tests run. */
export type KubeProxyMode = 'nftables' | 'iptables';

/** True when the binary is built. */
export function kubeProxyPresent(): boolean {
  return existsSync(KUBE_PROXY_BIN);
}

/** kube-proxy's command line for a node. */
export function kubeProxyArgv(n: SimNode, mode: KubeProxyMode, kubeconfig: string, clusterCidr: string): string[] {
  return [KUBE_PROXY_BIN, '--kubeconfig', kubeconfig, '--proxy-mode', mode, '--hostname-override', n.netns, '--cluster-cidr', clusterCidr,
    '--metrics-bind-address', '127.0.0.1:10249', '--healthz-bind-address', '127.0.0.1:10256',
    '--conntrack-max-per-core', '0', '--conntrack-tcp-timeout-established', '0', '--conntrack-tcp-timeout-close-wait', '0', '--v', '2'];
}

/** Starts kube-proxy on node `n` (log <node dir>/kube-proxy.log) and waits until its /healthz says it has synced. */
export async function startKubeProxy(topo: Topology, n: SimNode, mode: KubeProxyMode, kubeconfig: string, clusterCidr: string): Promise<ChildProcess> {
  const log = join(n.dir, 'kube-proxy.log');
  const p = topo.spawnIn(n.netns, kubeProxyArgv(n, mode, kubeconfig, clusterCidr), log);
  const end = Date.now() + 60_000;
  for (;;) {
    if (p.exitCode !== null) throw new Error(`kube-proxy on ${n.netns} exited with ${p.exitCode}: ${readFileSync(log, 'utf8').slice(-2000)}`);
    const r = await nsExec(n.netns, ['curl', '-sS', '--max-time', '1', 'http://127.0.0.1:10256/healthz']);
    if (r.code === 0 && /"lastUpdated"/.test(r.stdout) && !/"currentTime".*"lastUpdated": *""/.test(r.stdout)) return p;
    if (Date.now() > end) throw new Error(`kube-proxy on ${n.netns} not healthy after 60 s: ${r.stdout}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

/** Stops kube-proxy (SIGTERM; its rules stay, as on a real node). */
export async function stopKubeProxy(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null) return;
  const closed = new Promise((res) => p.once('close', res));
  p.kill('SIGTERM');
  await closed;
}

// kube-router's NetworkPolicy controller (v2.1.0, built by scripts/kube-router-setup.sh) as the
// reference peer of weft's: one per node namespace, firewall only, against the test's kube-apiserver.
// It picks its node's pods by status.hostIP == the Node's InternalIP, so the Nodes get one.
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor, type Cluster, type ClusterNode } from './cluster.ts';
import { nsExec } from './topology.ts';

export const KUBE_ROUTER_BIN = join(process.env.WEFT_CACHE_DIR ?? '/var/cache/weft', 'go-bin', 'kube-router-v2.1.0', 'kube-router');

/** Why kube-router cannot run here, or undefined when it can (the binary and ipset are present). */
export function kubeRouterMissing(): string | undefined {
  if (!existsSync(KUBE_ROUTER_BIN)) return `${KUBE_ROUTER_BIN} is missing: run scripts/kube-router-setup.sh`;
  if (!['/usr/sbin/ipset', '/sbin/ipset', '/usr/bin/ipset'].some((p) => existsSync(p))) return 'ipset is missing (Debian package ipset)';
  return undefined;
}

/** Gives every Node its InternalIP (the node namespace's underlay address), as the kubelet would report. */
export async function setNodeAddresses(c: Cluster): Promise<void> {
  const kube = c.kube;
  if (kube === undefined) throw new Error('kube-router needs the kube store');
  for (const n of c.nodes) {
    await kube.call('PATCH', `/api/v1/nodes/${n.netns}/status`, { status: { addresses: [{ type: 'InternalIP', address: n.ip }, { type: 'Hostname', address: n.netns }] } }, 'application/merge-patch+json');
  }
}

/** Starts kube-router's firewall on a node (log in <node dir>/kube-router.log); resolves once its chains exist. */
export async function startKubeRouter(c: Cluster, n: ClusterNode): Promise<ChildProcess> {
  const kube = c.kube;
  if (kube === undefined) throw new Error('kube-router needs the kube store');
  const log = join(n.dir, 'kube-router.log');
  const p = c.topo.spawnIn(n.netns, [KUBE_ROUTER_BIN, '--kubeconfig', kube.kubeconfig, '--hostname-override', n.netns,
    '--run-firewall=true', '--run-router=false', '--run-service-proxy=false', '--health-port', '0', '--metrics-port', '0',
    '--service-cluster-ip-range', '10.96.0.0/24', '--v', '1'], log);
  await waitFor(`kube-router on ${n.netns}`, async () => {
    if (p.exitCode !== null) throw new Error(`kube-router on ${n.netns} exited with ${p.exitCode}: ${readLog(log).slice(-2000)}`);
    return (await nsExec(n.netns, ['iptables', '-S', 'KUBE-ROUTER-FORWARD'])).code === 0;
  }, 60_000, 200);
  return p;
}

function readLog(path: string): string {
  try { return readFileSync(path, 'utf8'); } catch { return ''; }
}

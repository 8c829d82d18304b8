// Helpers of the --kube-subnet-mgr end-to-end tests: Node objects as another machine's flanneld would
// leave them, the weft route table of every node, and kernel-timestamped route withdrawals read with
// `ip -ts monitor route` inside a node namespace (never the root one).
import type { ChildProcess } from 'node:child_process';
import { vtepMac } from '../../../lib/flannel/vtep.ts';
import type { Cluster, ClusterNode } from '../../../testkit/cluster.ts';
import { nsRun } from '../../../testkit/topology.ts';
import { weftRoutes } from './helpers.ts';
export { routesTo } from './helpers.ts';

/** flanneld's default annotation prefix. */
export const P = 'flannel.alpha.coreos.com';

/** A Node object as flanneld on some other machine would leave it (no namespace behind it). */
export function fakeNode(name: string, podCidr: string, publicIp: string): Record<string, unknown> {
  return {
    apiVersion: 'v1', kind: 'Node', spec: { podCIDR: podCidr, podCIDRs: [podCidr] },
    metadata: { name, annotations: {
      [`${P}/backend-type`]: 'vxlan', [`${P}/backend-data`]: JSON.stringify({ VNI: 1, VtepMAC: vtepMac(publicIp, 1) }),
      [`${P}/kube-subnet-manager`]: 'true', [`${P}/public-ip`]: publicIp,
    } },
  };
}

/** Every node's weft routes, as sorted "dst via gw dev" lines. */
export async function routeTable(c: Cluster, nodes: ClusterNode[] = c.nodes): Promise<string[][]> {
  return Promise.all(nodes.map(async (n) => (await weftRoutes(n)).map((r) => `${r.dst} via ${r.gateway ?? '-'} dev ${r.dev ?? '-'}`).sort()));
}

const MARK = '198.51.100.254';

/** `ip -ts monitor route` in one node, with its lines kept in memory. */
export interface RouteMonitor {
  /** Wall-clock time (ms since the epoch) at which the kernel deleted a route to `dst`, or undefined. */
  deletedAt(dst: string): number | undefined;
  stop(): void;
}

/**
 * Starts `ip -ts monitor route` in each node and returns once every monitor has printed a marker
 * route added and removed by the test (so none can miss what follows). Timestamps are the kernel
 * notification's arrival at `ip`, in UTC, independent of how often the test polls.
 */
export async function monitorRoutes(c: Cluster, nodes: ClusterNode[]): Promise<RouteMonitor[]> {
  const mons = nodes.map((n) => {
    const proc: ChildProcess = c.topo.spawnIn(n.netns, ['env', 'TZ=UTC', 'ip', '-ts', 'monitor', 'route']);
    let out = '';
    proc.stdout?.on('data', (d: Buffer) => { out += d.toString(); });
    return {
      node: n, text: () => out,
      deletedAt(dst: string): number | undefined {
        const re = new RegExp(`^\\[([0-9T:.-]+)\\] Deleted ${dst.replace(/[./]/g, '\\$&')} `, 'm');
        const m = re.exec(out);
        return m ? Date.parse(`${m[1]}Z`) : undefined;
      },
      stop: () => { if (proc.exitCode === null) proc.kill('SIGTERM'); },
    };
  });
  const deadline = Date.now() + 10_000;
  while (!mons.every((m) => m.text().includes(`Deleted blackhole ${MARK}`))) {
    if (Date.now() > deadline) throw new Error('ip monitor route printed nothing in 10 s');
    for (const m of mons) {
      await nsRun(m.node.netns, ['ip', 'route', 'replace', 'blackhole', MARK]);
      await nsRun(m.node.netns, ['ip', 'route', 'del', 'blackhole', MARK]);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return mons;
}


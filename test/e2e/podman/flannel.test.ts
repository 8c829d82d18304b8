// podman (libcni) runs conf/weft-{vxlan,host-gw,udp}.conflist (flannel plugin + portmap) on two
// simulated nodes, each with its own weftd (file lease store): containers on different nodes reach
// each other across the VXLAN overlay / routed underlay / UDP forwarder, and `podman rm -f` leaves no address.
// Run twice: with the bundles, and with the standalone executable (dist/sea/weft hard-linked under
// every name in podman's CNI bin dir, weftd started from it too).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Cluster, type ClusterNode } from '../../../testkit/cluster.ts';
import { loudSkip, PodmanEnv, podmanSkipReason, uniqueNetworkName } from '../../../testkit/podman.ts';
import { standaloneBinDir, standaloneSkipReason } from '../../../testkit/standalone.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const reason = await podmanSkipReason();

interface NodeEnv {
  node: ClusterNode;
  env: PodmanEnv;
  ipamDir: string;
}

const CASES = [
  { backend: 'vxlan', plugin: 'flannel-vxlan', conflist: 'weft-vxlan.conflist' },
  { backend: 'host-gw', plugin: 'host-gw', conflist: 'weft-host-gw.conflist' },
  { backend: 'udp', plugin: 'flannel-udp', conflist: 'weft-udp.conflist' },
] as const;

/** A conf/ conflist with this node's subnet.env and data dirs (nodes share one machine). */
function nodeConflist(file: string, plugin: string, name: string, n: ClusterNode, ipamDir: string): { name: string } & Record<string, unknown> {
  const conf = JSON.parse(readFileSync(join(ROOT, 'conf', file), 'utf8')) as { plugins: Array<Record<string, unknown>> };
  const plugins = conf.plugins.map((p) =>
    p['type'] === plugin ? { ...p, subnetFile: n.subnetFile, dataDir: join(n.dir, 'flannel-podman'), ipam: { dataDir: ipamDir } } : p);
  return { ...conf, name, plugins };
}

for (const standalone of [false, true]) for (const { backend, plugin, conflist } of CASES) {
  const skip = reason !== undefined ? loudSkip(reason) : standalone && standaloneSkipReason();
  describe(`podman + ${plugin} with weftd on two nodes${standalone ? ' (standalone executable)' : ''}`, { skip, timeout: 300_000 }, () => {
    let cluster: Cluster | undefined;
    let bin: ReturnType<typeof standaloneBinDir> | undefined;
    const envs: NodeEnv[] = [];
    const net = uniqueNetworkName();

    before(async () => {
      bin = standalone ? standaloneBinDir() : undefined;
      cluster = await Cluster.create({ backend, store: 'file', nodes: 2, podsPerNode: 0, ...(bin ? { binDir: bin.dir } : {}) });
      for (const node of cluster.nodes) {
        // Standalone: podman's CNI bin dir is a standalone bin dir of its own (hard links, no copies).
        const env = new PodmanEnv({ netns: node.netns, ...(standalone ? { binDir: null } : {}) });
        if (standalone) standaloneBinDir(env.binDir);
        const ipamDir = join(env.dir, 'ipam');
        env.addNetwork(nodeConflist(conflist, plugin, net, node, ipamDir));
        envs.push({ node, env, ipamDir });
      }
    });

    after(async () => {
      for (const e of envs) await e.env.destroy();
      cluster?.destroy();
      bin?.remove();
    });

    test('containers on two nodes get addresses from their node leases and reach each other', async () => {
      const [a, b] = envs;
      assert.ok(a && b);
      await Promise.all(envs.map((e) => e.env.run('c', net, ['/bin/sleep', '600'])));
      const ipA = (await a.env.containerIp('c', net)).ip;
      const ipB = (await b.env.containerIp('c', net)).ip;
      for (const [e, ip] of [[a, ipA], [b, ipB]] as const) {
        const subnet = e.node.subnet ?? '';
        assert.ok(subnet !== '' && ip.startsWith(subnet.split('.').slice(0, 3).join('.') + '.'), `${ip} in ${e.node.netns}'s lease ${subnet}`);
      }
      assert.notEqual(a.node.subnet, b.node.subnet);
      for (const [from, to] of [[a, ipB], [b, ipA]] as const) {
        const r = await from.env.podman(['exec', 'c', 'ping', '-c', '2', '-W', '2', to]);
        assert.equal(r.code, 0, `ping ${to} from the container on ${from.node.netns}: ${r.stdout}${r.stderr}`);
      }
    });

    test('after podman rm -f no address file or cached result is left on either node', async () => {
      // Both nodes' podman share the machine's libcni cache and the network name: remove both first.
      await Promise.all(envs.map((e) => e.env.rm(['c'])));
      for (const e of envs) {
        const dir = join(e.ipamDir, net);
        const files = existsSync(dir) ? readdirSync(dir).filter((f) => /^[0-9.]+$/.test(f)) : [];
        assert.deepEqual(files, [], `address files on ${e.node.netns}`);
        assert.deepEqual(e.env.cachedResults(), []);
      }
    });
  });
}

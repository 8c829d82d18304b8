// containerd (Debian's 1.6) over CRI on two simulated nodes, each with weftd (vxlan backend, file
// lease store) and weft's `flannel` conflist (conf/10-flannel.conflist: flannel + portmap, what
// `weft install` writes): pods get addresses from their node's lease, reach each other across the
// overlay and serve a hostPort, a pod survives containerd being SIGKILLed and restarted, and
// StopPodSandbox + RemovePodSandbox leave nothing on either node. Run twice: with the bundles, and with
// containerd's bin_dir and weftd a standalone bin dir (dist/sea/weft under every name), the latter
// without the restart case, to keep the run short.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Cluster, type ClusterNode } from '../../../testkit/cluster.ts';
import { ContainerdEnv, uniqueNetworkName, type PodInfo } from '../../../testkit/containerd.ts';
import { standaloneBinDir, standaloneSkipReason } from '../standalone/helpers.ts';
import { CLEAN, failIfMissing, httpGet, leftovers, skipUnlessCi, waitUntil } from './helpers.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const CLIENT_IP = '192.0.2.200';
const BODY = 'hello from a weft container\n';

interface NodeEnv {
  node: ClusterNode;
  env: ContainerdEnv;
  net: string;
  ipamDir: string;
  flannelDir: string;
  pod?: PodInfo;
}

/** conf/10-flannel.conflist with this node's subnet.env and data dirs (nodes share one machine). */
function nodeConflist(name: string, n: ClusterNode, ipamDir: string, flannelDir: string): { name: string } & Record<string, unknown> {
  const conf = JSON.parse(readFileSync(join(ROOT, 'conf', '10-flannel.conflist'), 'utf8')) as { plugins: Array<Record<string, unknown>> };
  const plugins = conf.plugins.map((p) => (p['type'] === 'flannel' ? { ...p, subnetFile: n.subnetFile, dataDir: flannelDir, ipam: { dataDir: ipamDir } } : p));
  return { ...conf, name, plugins };
}

for (const standalone of [false, true]) describe(`containerd (CRI) + flannel conflist with weftd (vxlan) on two nodes${standalone ? ' (standalone executable)' : ''}`, { skip: skipUnlessCi() || (standalone && standaloneSkipReason()), timeout: 600_000 }, () => {
  /** Cases run only with the bundles. */
  const full = (name: string, fn: () => Promise<void>): void => {
    test(name, { skip: standalone ? 'run with the bundles only' : false }, fn);
  };
  let cluster: Cluster | undefined;
  let bin: ReturnType<typeof standaloneBinDir> | undefined;
  let clientNs = '';
  const nodes: NodeEnv[] = [];
  const base = uniqueNetworkName();

  before(async () => {
    failIfMissing();
    bin = standalone ? standaloneBinDir() : undefined;
    cluster = await Cluster.create({ backend: 'vxlan', store: 'file', nodes: 2, podsPerNode: 0, conflist: 'flannel', ...(bin ? { binDir: bin.dir } : {}) });
    clientNs = `/var/run/netns/${(await cluster.topo.addUnderlayHost('cl', CLIENT_IP)).netns}`;
    for (const node of cluster.nodes) {
      // A network name per node: both nodes' containerd share the machine's libcni result cache.
      const net = `${base}-n${node.id}`;
      const ipamDir = join(node.dir, 'ipam-ctrd');
      const flannelDir = join(node.dir, 'flannel-ctrd');
      const env = await ContainerdEnv.start({ netns: node.netns, conflist: nodeConflist(net, node, ipamDir, flannelDir), ...(bin ? { binDir: bin.dir } : {}) });
      nodes.push({ node, env, net, ipamDir, flannelDir });
    }
  });

  after(async () => {
    for (const n of nodes) await n.env.destroy();
    cluster?.destroy();
    bin?.remove();
  });

  const nodeLeftovers = (n: NodeEnv): ReturnType<typeof leftovers> => leftovers(n.env, n.node.netns, join(n.ipamDir, n.net), [n.flannelDir]);

  /** Waits until `url` answers with the container's page from the namespace at `nsPath`. */
  const waitServed = (nsPath: string, url: string): Promise<void> =>
    waitUntil(`${url} from ${nsPath}`, async () => (await httpGet(nsPath, url)) === BODY);

  test('pods on two nodes get addresses from their leases, reach each other across the overlay and serve a hostPort', async () => {
    await Promise.all(nodes.map(async (n) => {
      const spec = { name: 'web', ports: [{ hostPort: 8080, containerPort: 80 }] };
      const id = await n.env.runPod(spec);
      await n.env.startContainer(id, spec, 'httpd', ['/bin/httpd', '-f', '-p', '80', '-h', '/www']);
      n.pod = await n.env.inspectPod(id);
    }));
    const [a, b] = nodes;
    assert.ok(a?.pod && b?.pod);
    assert.notEqual(a.node.subnet, b.node.subnet);
    for (const n of [a, b]) {
      const prefix = (n.node.subnet ?? '').split('.').slice(0, 3).join('.');
      assert.ok(prefix !== '' && n.pod?.ip.startsWith(`${prefix}.`), `${n.pod?.ip ?? '?'} in ${n.node.netns}'s lease ${n.node.subnet ?? '?'}`);
      // The flannel plugin stored the rendered delegate for DEL, under the sandbox ID.
      assert.deepEqual((await nodeLeftovers(n)).dataFiles, [join(n.flannelDir, n.pod?.id ?? '')]);
    }
    await waitServed(a.pod.netnsPath, `http://${b.pod.ip}/`);
    await waitServed(b.pod.netnsPath, `http://${a.pod.ip}/`);
    for (const n of [a, b]) await waitServed(clientNs, `http://${n.node.ip}:8080/`);
  });

  full('containerd SIGKILLed and restarted on one node: its pod keeps its address and cross-node traffic', async () => {
    const [a, b] = nodes;
    assert.ok(a?.pod && b?.pod, 'the previous test started the pods');
    await a.env.killDaemon();
    await waitServed(b.pod.netnsPath, `http://${a.pod.ip}/`);
    await a.env.startDaemon();
    const again = await a.env.inspectPod(a.pod.id);
    assert.deepEqual({ state: again.state, ip: again.ip }, { state: 'SANDBOX_READY', ip: a.pod.ip });
    assert.deepEqual((await nodeLeftovers(a)).addressFiles, [a.pod.ip], 'no second address was taken on restart');
    await waitServed(b.pod.netnsPath, `http://${a.pod.ip}/`);
    await waitServed(a.pod.netnsPath, `http://${b.pod.ip}/`);
    await waitServed(clientNs, `http://${a.node.ip}:8080/`);
  });

  test('StopPodSandbox and RemovePodSandbox leave nothing on either node', async () => {
    for (const n of nodes) {
      assert.ok(n.pod, 'the first test started the pods');
      await n.env.removePod(n.pod.id);
      assert.deepEqual(await nodeLeftovers(n), CLEAN, `leftovers on ${n.node.netns}`);
      assert.deepEqual(await n.env.podIds(), []);
    }
  });
});

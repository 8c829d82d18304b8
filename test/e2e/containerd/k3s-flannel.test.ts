// containerd (Debian's 1.6) over CRI on two simulated nodes, each with weftd (vxlan backend, file
// lease store) and k3s's 10-flannel.conflist (flannel + portmap + bandwidth, the real fixture with
// only the per-node paths substituted): pods reach each other across the overlay, serve a hostPort,
// are shaped from their kubernetes.io/{ingress,egress}-bandwidth annotations (containerd turns them
// into runtimeConfig.bandwidth), and StopPodSandbox + RemovePodSandbox leave nothing on either node
// (address files, veths, nft elements, stored delegates, qdiscs, ifb devices, cached results).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Cluster, type ClusterNode } from '../../../testkit/cluster.ts';
import { ContainerdEnv, run, uniqueNetworkName, type PodInfo } from '../../../testkit/containerd.ts';
import { CLEAN, failIfMissing, httpGet, ipJson, leftovers, skipUnlessCi, waitUntil } from './helpers.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const CLIENT_IP = '192.0.2.200';
const BODY = 'hello from a weft container\n';
const ANNOTATIONS = { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '20M' };

interface NodeEnv {
  node: ClusterNode;
  env: ContainerdEnv;
  net: string;
  ipamDir: string;
  flannelDir: string;
  pod?: PodInfo;
}

/** k3s's conflist with what k3s/a runtime sets per node: the subnet file and data dirs (nodes share one machine). */
function nodeConflist(name: string, n: ClusterNode, ipamDir: string, flannelDir: string): { name: string } & Record<string, unknown> {
  const conf = JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'real-configs', 'k3s-10-flannel.conflist'), 'utf8')) as { plugins: Array<Record<string, unknown>> };
  const plugins = conf.plugins.map((p) => (p['type'] === 'flannel' ? { ...p, subnetFile: n.subnetFile, dataDir: flannelDir, ipam: { dataDir: ipamDir } } : p));
  return { ...conf, name, plugins };
}

/** Non-default qdiscs (handle other than 0:) in the node namespace `nodeNs`, as `kind dev`. */
async function qdiscs(nodeNs: string): Promise<string[]> {
  const r = await run(['nsenter', `--net=/var/run/netns/${nodeNs}`, 'tc', '-j', 'qdisc', 'show'], 10_000);
  if (r.code !== 0) throw new Error(`tc qdisc show in ${nodeNs} failed: ${r.stderr.trim()}`);
  const list = JSON.parse(r.stdout || '[]') as Array<{ kind: string; handle: string; dev: string }>;
  return list.filter((q) => q.handle !== '0:').map((q) => `${q.kind} ${q.dev}`);
}

/** ifb device names in the node namespace `nodeNs`. */
async function ifbs(nodeNs: string): Promise<string[]> {
  return (await ipJson<Array<{ ifname: string }>>(`/var/run/netns/${nodeNs}`, ['link', 'show', 'type', 'ifb'])).map((l) => l.ifname);
}

describe('containerd (CRI) + k3s flannel conflist (flannel + portmap + bandwidth) with weftd on two nodes', { skip: skipUnlessCi(), timeout: 300_000 }, () => {
  let cluster: Cluster | undefined;
  let clientNs = '';
  const nodes: NodeEnv[] = [];
  const base = uniqueNetworkName();

  before(async () => {
    failIfMissing();
    cluster = await Cluster.create({ backend: 'vxlan', store: 'file', nodes: 2, podsPerNode: 0, conflist: 'flannel' });
    clientNs = `/var/run/netns/${(await cluster.topo.addUnderlayHost('cl', CLIENT_IP)).netns}`;
    for (const node of cluster.nodes) {
      // A network name per node: both nodes' containerd share the machine's libcni result cache.
      const net = `${base}-n${node.id}`;
      const ipamDir = join(node.dir, 'ipam-ctrd');
      const flannelDir = join(node.dir, 'flannel-ctrd');
      const env = await ContainerdEnv.start({ netns: node.netns, conflist: nodeConflist(net, node, ipamDir, flannelDir) });
      nodes.push({ node, env, net, ipamDir, flannelDir });
    }
  });

  after(async () => {
    for (const n of nodes) await n.env.destroy();
    cluster?.destroy();
  });

  const nodeLeftovers = (n: NodeEnv): ReturnType<typeof leftovers> => leftovers(n.env, n.node.netns, join(n.ipamDir, n.net), [n.flannelDir]);
  const waitServed = (nsPath: string, url: string): Promise<void> =>
    waitUntil(`${url} from ${nsPath}`, async () => (await httpGet(nsPath, url)) === BODY);

  test('annotated pods on two nodes reach each other, serve a hostPort, and are shaped (tbf on the veth, ifb)', async () => {
    await Promise.all(nodes.map(async (n) => {
      const spec = { name: 'web', ports: [{ hostPort: 8080, containerPort: 80 }], annotations: ANNOTATIONS };
      const id = await n.env.runPod(spec);
      await n.env.startContainer(id, spec, 'httpd', ['/bin/httpd', '-f', '-p', '80', '-h', '/www']);
      n.pod = await n.env.inspectPod(id);
    }));
    const [a, b] = nodes;
    assert.ok(a?.pod && b?.pod);
    assert.notEqual(a.node.subnet, b.node.subnet);
    await waitServed(a.pod.netnsPath, `http://${b.pod.ip}/`);
    await waitServed(b.pod.netnsPath, `http://${a.pod.ip}/`);
    for (const n of [a, b]) {
      await waitServed(clientNs, `http://${n.node.ip}:8080/`);
      const left = await nodeLeftovers(n);
      assert.equal(left.veths.length, 1);
      assert.deepEqual(left.addressFiles, [n.pod?.ip ?? '']);
      assert.deepEqual(left.dataFiles, [join(n.flannelDir, n.pod?.id ?? '')]);
      const veth = left.veths[0] ?? '';
      // Ingress (into the pod) shapes the host veth's egress; egress is redirected to an ifb shaped the same way.
      const q = await qdiscs(n.node.netns);
      assert.ok(q.includes(`tbf ${veth}`), `tbf on ${veth}: ${q.join('; ')}`);
      const ifb = await ifbs(n.node.netns);
      assert.equal(ifb.length, 1, `one ifb: ${ifb.join(', ')}`);
      assert.ok(q.includes(`tbf ${ifb[0] ?? ''}`), `tbf on the ifb: ${q.join('; ')}`);
    }
  });

  test('StopPodSandbox and RemovePodSandbox leave nothing on either node, qdiscs and ifb devices included', async () => {
    for (const n of nodes) {
      assert.ok(n.pod, 'the first test started the pods');
      await n.env.removePod(n.pod.id);
      assert.deepEqual(await nodeLeftovers(n), CLEAN, `leftovers on ${n.node.netns}`);
      assert.deepEqual(await ifbs(n.node.netns), []);
      assert.deepEqual(await qdiscs(n.node.netns), []);
      assert.deepEqual(await n.env.podIds(), []);
    }
  });
});

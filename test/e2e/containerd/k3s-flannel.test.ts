// containerd (Debian's 1.6) over CRI on two simulated nodes, each with weftd (vxlan backend, file
// lease store) and k3s's 10-flannel.conflist (flannel + portmap + bandwidth, the real fixture with
// only the per-node paths substituted): pods reach each other across the overlay, serve a hostPort,
// are shaped from their kubernetes.io/{ingress,egress}-bandwidth annotations (containerd turns them
// into runtimeConfig.bandwidth), and StopPodSandbox + RemovePodSandbox leave nothing on either node
// (address files, veths, nft elements, stored delegates, qdiscs, ifb devices, cached results).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { run } from '../../../testkit/containerd.ts';
import { inNetnsPath } from '../../../testkit/netns.ts';
import { useFlannelCluster, type NodeEnv } from './flannel-cluster.ts';
import { CLEAN, ipJson, skipUnlessCi, type NodeLeftovers } from './helpers.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const ANNOTATIONS = { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '20M' };



/** Non-default qdiscs (handle other than 0:) in the node namespace `nodeNs`, as `kind dev`. */
async function qdiscs(nodeNs: string): Promise<string[]> {
  const r = await run(inNetnsPath(`/var/run/netns/${nodeNs}`, ['tc', '-j', 'qdisc', 'show']), 10_000);
  if (r.code !== 0) throw new Error(`tc qdisc show in ${nodeNs} failed: ${r.stderr.trim()}`);
  const list = JSON.parse(r.stdout || '[]') as Array<{ kind: string; handle: string; dev: string }>;
  return list.filter((q) => q.handle !== '0:').map((q) => `${q.kind} ${q.dev}`);
}

/** ifb device names in the node namespace `nodeNs`. */
async function ifbs(nodeNs: string): Promise<string[]> {
  return (await ipJson<Array<{ ifname: string }>>(`/var/run/netns/${nodeNs}`, ['link', 'show', 'type', 'ifb'])).map((l) => l.ifname);
}

describe('containerd (CRI) + k3s flannel conflist (flannel + portmap + bandwidth) with weftd on two nodes', { skip: skipUnlessCi(), timeout: 300_000 }, () => {
  const lab = useFlannelCluster(join(ROOT, 'test', 'fixtures', 'real-configs', 'k3s-10-flannel.conflist'));
  const { nodes } = lab;
  const nodeLeftovers = (n: NodeEnv): Promise<NodeLeftovers> => lab.leftovers(n);
  const waitServed = (nsPath: string, url: string): Promise<void> => lab.waitServed(nsPath, url);

  test('annotated pods on two nodes reach each other, serve a hostPort, and are shaped (tbf on the veth, ifb)', async () => {
    await lab.startWebPods(ANNOTATIONS);
    const [a, b] = nodes;
    assert.ok(a?.pod && b?.pod);
    assert.notEqual(a.node.subnet, b.node.subnet);
    await waitServed(a.pod.netnsPath, `http://${b.pod.ip}/`);
    await waitServed(b.pod.netnsPath, `http://${a.pod.ip}/`);
    for (const n of [a, b]) {
      await waitServed(lab.clientNs, `http://${n.node.ip}:8080/`);
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

// containerd (Debian's 1.6) over CRI on two simulated nodes, each with weftd (vxlan backend, file
// lease store) and weft's `flannel` conflist (conf/10-flannel.conflist: flannel + portmap, what
// `weft install` writes): pods get addresses from their node's lease, reach each other across the
// overlay and serve a hostPort, a pod survives containerd being SIGKILLed and restarted, and
// StopPodSandbox + RemovePodSandbox leave nothing on either node. Run twice: with the bundles, and with
// containerd's bin_dir and weftd a standalone bin dir (dist/sea/weft under every name), the latter
// without the restart case, to keep the run short.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { standaloneSkipReason } from '../../../testkit/standalone.ts';
import { useFlannelCluster, type NodeEnv } from './flannel-cluster.ts';
import { CLEAN, skipUnlessCi, type NodeLeftovers } from './helpers.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

for (const standalone of [false, true]) describe(`containerd (CRI) + flannel conflist with weftd (vxlan) on two nodes${standalone ? ' (standalone executable)' : ''}`, { skip: skipUnlessCi() || (standalone && standaloneSkipReason()), timeout: 600_000 }, () => {
  /** Cases run only with the bundles. */
  const full = (name: string, fn: () => Promise<void>): void => {
    test(name, { skip: standalone ? 'run with the bundles only' : false }, fn);
  };
  const lab = useFlannelCluster(join(ROOT, 'conf', '10-flannel.conflist'), { standalone });
  const { nodes } = lab;
  const nodeLeftovers = (n: NodeEnv): Promise<NodeLeftovers> => lab.leftovers(n);
  const waitServed = (nsPath: string, url: string): Promise<void> => lab.waitServed(nsPath, url);

  test('pods on two nodes get addresses from their leases, reach each other across the overlay and serve a hostPort', async () => {
    await lab.startWebPods();
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
    for (const n of [a, b]) await waitServed(lab.clientNs, `http://${n.node.ip}:8080/`);
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
    await waitServed(lab.clientNs, `http://${a.node.ip}:8080/`);
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

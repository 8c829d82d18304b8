// The `flannel` executable (flannel's own type) on the simulated cluster, with conf/10-flannel.conflist
// (what `weft install` writes) for each weftd backend: pods on different nodes reach each other, DEL
// leaves nothing of the pod on the node (veth, address file, nft element), a DEL whose stored delegate
// is gone succeeds; on vxlan a missing VTEP is re-created from weftd's spec, elsewhere a stale spec is ignored.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Cluster, waitFor, type ClusterNode } from '../../../testkit/cluster.ts';
import { nsExec, nsRun } from '../../../testkit/topology.ts';
import { pingOnce, skipReason } from './helpers.ts';

/** Host veths on the node's bridge, and the address files host-local holds there. */
async function nodeState(n: ClusterNode): Promise<{ veths: string[]; ipFiles: string[] }> {
  const links = await nsRun(n.netns, ['ip', '-o', 'link', 'show', 'type', 'veth']);
  const veths = links.split('\n').filter((l) => l.trim() !== '').map((l) => l.split(':')[1]?.trim().split('@')[0] ?? '');
  const dir = join(n.dir, 'ipam', 'cbr0'); // conf/10-flannel.conflist keeps kube-flannel's network name
  const ipFiles = existsSync(dir) ? readdirSync(dir).filter((f) => /^[0-9]+(\.[0-9]+){3}$/.test(f)) : [];
  return { veths, ipFiles };
}

for (const backend of ['vxlan', 'host-gw', 'udp'] as const) {
  void describe(`type flannel with weftd's ${backend} backend`, { skip: skipReason(), timeout: 120_000 }, () => {
    let c: Cluster | undefined;
    after(() => c?.destroy());

    it('wires one pod per node through the flannel conflist; the pods reach each other', async () => {
      c = await Cluster.create({ backend, store: 'file', nodes: 2, podsPerNode: 1, conflist: 'flannel' });
      const [a, b] = c.pods;
      assert.ok(a && b && a.node !== b.node);
      const stored = JSON.parse(readFileSync(join(a.node.dir, 'flannel', a.containerId), 'utf8')) as Record<string, unknown>;
      assert.equal(stored['type'], 'bridge');
      assert.equal(stored['hairpinMode'], true, 'delegate keys pass through');
      assert.equal(stored['mtu'], backend === 'vxlan' ? 1450 : backend === 'udp' ? 1472 : 1500, 'mtu = FLANNEL_MTU of the backend');
      await waitFor(`${a.name} -> ${b.name}`, () => pingOnce(a.netns, b.ip), 10_000, 100);
      await waitFor(`${b.name} -> ${a.name}`, () => pingOnce(b.netns, a.ip), 10_000, 100);
    });

    it('DEL leaves nothing of the pod; DEL again, and DEL without the stored delegate, succeed', async () => {
      assert.ok(c);
      const n = c.nodes[0] as ClusterNode;
      const before = await nodeState(n);
      const pod = await c.addPod(n, 2);
      const during = await nodeState(n);
      assert.equal(during.veths.length, before.veths.length + 1);
      assert.ok(during.ipFiles.includes(pod.ip), `${pod.ip} is held in ${JSON.stringify(during.ipFiles)}`);
      assert.match(await nsRun(n.netns, ['nft', 'list', 'ruleset']), new RegExp(`\\b${pod.ip.replaceAll('.', '\\.')}\\b`), 'the masquerade element');
      await c.delPod(pod);
      assert.doesNotMatch(await nsRun(n.netns, ['nft', 'list', 'ruleset']), new RegExp(`\\b${pod.ip.replaceAll('.', '\\.')}\\b`), 'no nft element left');
      assert.deepEqual(await nodeState(n), before);
      assert.equal(existsSync(join(n.dir, 'flannel', pod.containerId)), false, 'the stored delegate is removed');
      const att = { containerId: pod.containerId, netns: pod.path, ifName: 'eth0' };
      await n.runner.del(att);

      // The dataDir file vanished (a wiped /var/lib, say): DEL still succeeds, as flannel's does.
      const lost = await c.addPod(n, 3);
      rmSync(join(n.dir, 'flannel', lost.containerId));
      await n.runner.del({ containerId: lost.containerId, netns: lost.path, ifName: 'eth0' });
    });

    it(backend === 'vxlan' ? 'with weftd stopped, ADD re-creates a deleted flannel.1 from weftd\'s spec' : 'a VTEP spec left from a vxlan run is not replayed', async () => {
      assert.ok(c);
      const n = c.nodes[1] as ClusterNode;
      const spec = join(dirname(n.subnetFile), 'weft-vtep.json');
      if (backend === 'vxlan') {
        assert.equal(await c.stopWeftd(n), 0);
        await nsRun(n.netns, ['ip', 'link', 'del', 'flannel.1']);
        await c.addPod(n, 4);
        assert.match(await nsRun(n.netns, ['ip', '-d', 'link', 'show', 'flannel.1']), /vxlan id 1 .*dstport 8472/);
        await c.startWeftd(n);
      } else {
        // What weftd would have left had this node run vxlan on the same lease before.
        writeFileSync(spec, JSON.stringify({ name: 'flannel.1', vni: 1, port: 8472, local: n.ip, uplink: 'eth0', mac: '02:11:22:33:44:55', mtu: 1450, address: `${n.subnet?.split('/')[0] ?? ''}/32` }));
        await c.addPod(n, 4);
        assert.equal((await nsExec(n.netns, ['ip', 'link', 'show', 'flannel.1'])).code, 1, 'no flannel.1 on a non-vxlan node');
      }
    });
  });
}

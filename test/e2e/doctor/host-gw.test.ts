// `weft doctor` on a 2-node host-gw cluster (file store): clean when healthy; a deleted peer route
// and a stale weft route (proto 87, no lease) are named, each with its repair.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster, type ClusterNode } from '../../../testkit/cluster.ts';
import { nsRun } from '../../../testkit/topology.ts';
import { assertClean, doctor, problemsOf, skipReason } from './helpers.ts';

void describe('weft doctor on a host-gw node', { skip: skipReason(), timeout: 120_000 }, () => {
  let c: Cluster;
  let n1: ClusterNode;
  let n2: ClusterNode;
  before(async () => {
    c = await Cluster.create({ backend: 'host-gw', store: 'file', nodes: 2, podsPerNode: 1 });
    [n1, n2] = c.nodes as [ClusterNode, ClusterNode];
  });
  after(() => c?.destroy());

  void it('reports clean, then names a missing peer route and a stale one', async () => {
    assertClean(await doctor(c, n1));
    n1.weftd?.kill('SIGSTOP');
    try {
      await nsRun(n1.netns, ['ip', 'route', 'del', n2.subnet as string]);
      await nsRun(n1.netns, ['ip', 'route', 'add', '10.244.250.0/24', 'via', n2.ip, 'proto', '87']);
      const r = await doctor(c, n1);
      const peers = problemsOf(r, 'peers');
      assert.ok(peers.some((p) => p.detail === `route missing: ${n2.subnet as string} should go via ${n2.ip} dev ${n1.uplink}`), JSON.stringify(peers));
      assert.ok(peers.some((p) => p.detail.startsWith('stale route: 10.244.250.0/24') && p.fix === 'ip route del 10.244.250.0/24 proto 87'), JSON.stringify(peers));
      assert.equal(peers.length, 2, JSON.stringify(peers));
    } finally {
      n1.weftd?.kill('SIGCONT');
    }
  });
});

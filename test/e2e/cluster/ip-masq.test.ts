// weftd --ip-masq: traffic from the cluster Network to outside it leaves with the node's address;
// pod-to-pod traffic keeps the pod's address; one nftables table holds the rules.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster, type ClusterNode, type ClusterPod } from '../../../testkit/cluster.ts';
import { nsRun } from '../../../testkit/topology.ts';
import { echoPeer, peerSeenBy, skipReason } from './helpers.ts';

void describe('weftd --ip-masq', { skip: skipReason(), timeout: 120_000 }, () => {
  let c: Cluster;
  before(async () => { c = await Cluster.create({ backend: 'vxlan', store: 'file', nodes: 2, podsPerNode: 1, ipMasq: true }); });
  after(() => c?.destroy());

  it('subnet.env says FLANNEL_IPMASQ=true, so the bridge does not masquerade; weftd holds one chain', async () => {
    const n1 = c.nodes[0] as ClusterNode;
    const rules = await nsRun(n1.netns, ['nft', 'list', 'ruleset']);
    assert.match(rules, /chain ipmasq-postrouting/);
    assert.doesNotMatch(rules, /bridge-masq/);
    assert.equal((rules.match(/^table /gm) ?? []).length, 1, rules);
  });

  it('pod -> outside the Network is masqueraded; pod -> pod on another node is not', async () => {
    const [n1, n2] = c.nodes as [ClusterNode, ClusterNode];
    const [p1, p2] = c.pods as [ClusterPod, ClusterPod];
    echoPeer(c, n2.netns);
    echoPeer(c, p2.netns);
    assert.equal(await peerSeenBy(p1.netns, n2.ip), n1.ip, 'to a node address (outside the Network): source is n1');
    assert.equal(await peerSeenBy(p1.netns, p2.ip), p1.ip, 'pod to pod: source kept');
  });
});

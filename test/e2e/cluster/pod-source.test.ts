// Pods keep their own addresses between nodes, whatever the masquerade setting: in every backend,
// with weftd's default flags (the bridge masquerades, exempting the cluster Network through
// weftMasqExempt) and with --ip-masq (weftd masquerades, the bridge does not), a pod on another node
// sees the sender pod's address; traffic leaving the Network is masqueraded once, to the node's address.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster, type ClusterNode, type ClusterPod } from '../../../testkit/cluster.ts';
import { nsRun } from '../../../testkit/topology.ts';
import { echoPeer, peerSeenBy, skipReason } from './helpers.ts';

void describe('pod source addresses across nodes', { skip: skipReason(), timeout: 300_000 }, () => {
  const made: Cluster[] = [];
  after(() => { for (const c of made) c.destroy(); });

  for (const backend of ['vxlan', 'host-gw', 'udp'] as const) {
    for (const ipMasq of [false, true]) {
      void it(`${backend}, ${ipMasq ? 'weftd --ip-masq' : 'default flags'}: pod to pod keeps the source; to outside, the node's address`, async () => {
        const c = await Cluster.create({ backend, store: 'file', nodes: 2, podsPerNode: 1, ipMasq });
        made.push(c);
        const [n1, n2] = c.nodes as [ClusterNode, ClusterNode];
        const [p1, p2] = c.pods as [ClusterPod, ClusterPod];
        for (const ns of [p1.netns, p2.netns, n2.netns]) echoPeer(c, ns);
        assert.equal(await peerSeenBy(p1.netns, p2.ip), p1.ip, `${p2.name} on ${n2.netns} sees ${p1.name}'s own address`);
        assert.equal(await peerSeenBy(p2.netns, p1.ip), p2.ip, 'and the other way round');
        // n2's underlay address is outside the cluster Network: masqueraded to n1's address.
        assert.equal(await peerSeenBy(p1.netns, n2.ip), n1.ip);
        // Exactly one masquerade applies: the bridge's (exempting the Network) or weftd's, never both.
        const rules = await nsRun(n1.netns, ['nft', 'list', 'ruleset']);
        if (ipMasq) {
          assert.match(rules, /chain ipmasq-postrouting/);
          assert.doesNotMatch(rules, /chain bridge-masq-/, rules);
        } else {
          assert.doesNotMatch(rules, /chain ipmasq-postrouting/, rules);
          assert.match(rules, /ip daddr != @bridge-exempt4-[0-9a-f]{8} /, rules);
          assert.match(rules, /set bridge-exempt4-[0-9a-f]{8} \{[^}]*elements = \{ 10\.244\.0\.0\/16 \}/s, rules);
        }
      });
    }
  }
});

// Issue 27 item 8: IPv6-only clusters (net-conf EnableIPv4 false, EnableIPv6 true), as flannel and
// k3s run them, on each lease store and both backends that carry IPv6 (2 nodes x 1 pod each, built
// binaries): every node leases a distinct IPv6 subnet (no IPv4 side: flannel's 0.0.0.0-0 key),
// subnet.env carries only the IPv6 lines, no IPv4 VTEP or route exists, and the pods reach each other over IPv6.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Cluster } from '../../../testkit/cluster.ts';
import { kubeBinariesPresent } from '../../../testkit/kube-apiserver.ts';
import { canPing } from '../../../testkit/probe.ts';
import { nsExec } from '../../../testkit/topology.ts';
import { skipReason, weftRoutes, weftRoutes6 } from './helpers.ts';

const IPV6_NETWORK = 'fd00:10:244::/56';

const CASES = [
  { store: 'file', backend: 'vxlan' },
  { store: 'etcd', backend: 'host-gw' },
  { store: 'kube', backend: 'vxlan' },
] as const;

for (const { store, backend } of CASES) {
  const skip = skipReason(store === 'etcd' ? { etcd: true } : {}) || (store === 'kube' && !kubeBinariesPresent() ? 'kube-apiserver not built: run scripts/kube-setup.sh' : false);
  void describe(`IPv6-only, ${backend}, ${store} store`, { skip, timeout: 120_000 }, () => {
    let c: Cluster;
    before(async () => {
      c = await Cluster.create({ backend, store, nodes: 2, podsPerNode: 1, ipv6Network: IPV6_NETWORK, ipv6Only: true });
    });
    after(() => c?.destroy());

    it('distinct IPv6 leases, IPv6-only subnet.env, no IPv4 side, pods reach each other over IPv6', async () => {
      const subnets = c.nodes.map((n) => n.subnet6);
      assert.equal(new Set(subnets).size, 2, `IPv6 subnets ${subnets.join(' ')}`);
      for (const n of c.nodes) {
        const env = readFileSync(n.subnetFile, 'utf8');
        assert.doesNotMatch(env, /FLANNEL_NETWORK=|FLANNEL_SUBNET=/, `${n.netns} subnet.env`);
        assert.match(env, new RegExp(`FLANNEL_IPV6_NETWORK=${IPV6_NETWORK.replace(/[./]/g, '\\$&')}\\n`));
        assert.equal((await nsExec(n.netns, ['ip', 'link', 'show', 'flannel.1'])).code, 1, `${n.netns}: no IPv4 VTEP`);
        assert.deepEqual(await weftRoutes(n), [], `${n.netns}: no IPv4 routes`);
        const other = c.nodes.find((o) => o !== n);
        assert.deepEqual((await weftRoutes6(n)).map((r) => r.dst), [other?.subnet6], `${n.netns}: the peer's IPv6 route`);
      }
      for (const a of c.pods) for (const b of c.pods) {
        // canPing waits a second per try: the first packet waits for neighbour discovery on the far bridge.
        if (a !== b) assert.ok(await canPing(a.netns, b.ip), `${a.name} -> ${b.name} (${b.ip})`);
      }
      if (store === 'etcd') {
        const keys = await c.etcd?.etcdctl(['get', '--prefix', '--keys-only', '/coreos.com/network/subnets/']) ?? '';
        assert.equal(keys.split('\n').filter((k) => k.startsWith('/coreos.com/network/subnets/0.0.0.0-0&fd00:10:244:')).length, 2, keys);
      }
      for (const n of c.nodes) assert.deepEqual(c.weftdLog(n).split('\n').filter((l) => /"level":"(warn|error)"/.test(l)), [], `${n.netns}: weftd warnings`);
    });
  });
}

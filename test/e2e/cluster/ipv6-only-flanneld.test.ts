// Issue 27 item 8: a mixed IPv6-only cluster (EnableIPv4 false): the real flanneld (built by
// scripts/flannel-setup.sh) on node 1 and weftd on node 2, kube store (vxlan, host-gw) and etcd store
// (vxlan, net-conf in etcd as flanneld needs), pods wired by flannel's own CNI plugin on the
// flanneld node. Each side reads the other's IPv6-only lease, and the pods reach each other over IPv6.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { Cluster, waitFor } from '../../../testkit/cluster.ts';
import { kubeBinariesPresent } from '../../../testkit/kube-apiserver.ts';
import { canPing } from '../../../testkit/probe.ts';
import { FLANNEL_CNI, skipReason, weftRoutes6 } from './helpers.ts';

const FLANNELD = `${process.env['WEFT_CACHE_DIR'] ?? '/var/cache/weft'}/go-bin/flannel-v0.28.10/flannel`;

// etcd: flannel's etcd subnet manager marks every lease it reads EnableIPv4 (pkg/subnet/etcd/
// registry.go), so flanneld IPv6-only programs the zero IPv4 side of each peer and never its IPv6
// one (host-gw: "Subnet added: 0.0.0.0/0 via 0.0.0.0"; vxlan: no IPv4 device), whoever the peer runs
// (docs/weftd.md). There the test checks the lease format and weftd's side only.
const CASES = [
  { store: 'kube', backend: 'vxlan' },
  { store: 'kube', backend: 'host-gw' },
  { store: 'etcd', backend: 'vxlan' },
] as const;

/** flanneld's IPv6-only vxlan looks for the IPv4 device it did not create (vxlan_network.go), and says so once. */
const FLANNELD_V6ONLY_NOISE = /vxlan device is nil, cannot watch for events/;

for (const { store, backend } of CASES) {
  const skip = skipReason(store === 'etcd' ? { etcd: true } : {}) || (store === 'kube' && !kubeBinariesPresent() ? 'kube-apiserver not built: run scripts/kube-setup.sh' : false) ||
    (existsSync(FLANNELD) ? false : `${FLANNELD} missing: run scripts/flannel-setup.sh`) || (existsSync(FLANNEL_CNI) ? false : `${FLANNEL_CNI} missing: run scripts/flannel-cni-setup.sh`);
  void describe(`IPv6-only, ${backend}, ${store} store: flanneld on node 1, weftd on node 2`, { skip, timeout: 150_000 }, () => {
    let c: Cluster;
    before(async () => {
      c = await Cluster.create({
        backend, store, nodes: 2, podsPerNode: 1, ipv6Network: 'fd00:10:244::/56', ipv6Only: true, netConfInEtcd: store === 'etcd',
        delegate: { ipMasq: false }, flanneld: { bin: FLANNELD, nodes: [1], cniBin: FLANNEL_CNI },
      });
    });
    after(() => c?.destroy());

    it('each programs the other\'s IPv6 subnet and the pods reach each other over IPv6', async () => {
      const [f, w] = c.nodes;
      assert.ok(f?.subnet6 && w?.subnet6 && f.subnet6 !== w.subnet6, `subnets ${f?.subnet6 ?? '-'} ${w?.subnet6 ?? '-'}`);
      // flanneld programs its routes with protocol boot; weftd's carry protocol 87.
      await waitFor('weftd routes to flanneld\'s subnet', async () => (await weftRoutes6(w)).some((r) => r.dst === f.subnet6), 15_000, 200);
      assert.deepEqual(c.weftdLog(w).split('\n').filter((l) => /"level":"(warn|error)"/.test(l)), [], 'weftd warnings');
      if (store === 'etcd') {
        // Both leases in flanneld's IPv6-only form: key 0.0.0.0-0&<v6>, PublicIP 0.0.0.0, the same keys in the same order.
        const kv = (await c.etcd?.etcdctl(['get', '--prefix', '/coreos.com/network/subnets/']) ?? '').split('\n').filter((l) => l !== '');
        // Key order and value types; PublicIP "0.0.0.0" itself is kept.
        const shape = (v: string | undefined): string => JSON.stringify(JSON.parse(v ?? 'null'), (k, x: unknown) => (typeof x === 'string' && k !== 'PublicIP' ? typeof x : x));
        assert.equal(kv.length, 4, kv.join('\n'));
        for (const n of [f, w]) assert.ok(kv.includes(`/coreos.com/network/subnets/0.0.0.0-0&${(n.subnet6 ?? '').replace('/', '-')}`), `${n.netns} key`);
        assert.equal(shape(kv[1]), shape(kv[3]), `flanneld's and weftd's values: ${kv[1] ?? ''} ${kv[3] ?? ''}`);
        return;
      }
      for (const a of c.pods) for (const b of c.pods) {
        if (a !== b) assert.ok(await canPing(a.netns, b.ip), `${a.name} -> ${b.name} (${b.ip})`);
      }
      assert.deepEqual(c.flanneldLog(f).split('\n').filter((l) => /^E\d{4}/.test(l) && !FLANNELD_V6ONLY_NOISE.test(l)), [], 'flanneld errors');
    });
  });
}

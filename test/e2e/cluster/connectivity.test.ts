// Issue 5, must show: with vxlan and host-gw, with the file store and with etcd, every pod pings
// every other pod, pods reach nodes and nodes reach pods (3 nodes x 2 pods, built binaries); one
// case runs every plugin and weftd from a standalone bin dir (dist/sea/weft under each name).
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster, type ClusterNode } from '../../../testkit/cluster.ts';
import { pingMatrix } from '../../../testkit/probe.ts';
import { standaloneBinDir, standaloneSkipReason } from '../../../testkit/standalone.ts';
import { allProbes, skipReason, vtepFdb, vtepLink, vtepNeighs, weftRoutes } from './helpers.ts';

const combos = [
  { backend: 'vxlan', store: 'file', standalone: false },
  { backend: 'host-gw', store: 'file', standalone: false },
  { backend: 'vxlan', store: 'etcd', standalone: false },
  { backend: 'host-gw', store: 'etcd', standalone: false },
  { backend: 'host-gw', store: 'etcd', standalone: true },
] as const;

for (const { backend, store, standalone } of combos) {
  const skip = skipReason({ etcd: store === 'etcd' }) || (standalone && standaloneSkipReason());
  void describe(`${backend} with the ${store} store${standalone ? ', standalone executable' : ''}`, { skip, timeout: 180_000 }, () => {
    let c: Cluster | undefined;
    const bin = standalone && skip === false ? standaloneBinDir() : undefined;
    after(() => {
      c?.destroy();
      bin?.remove();
    });

    it('builds 3 nodes x 2 pods with distinct subnets', async () => {
      c = await Cluster.create({ backend, store, nodes: 3, podsPerNode: 2, ...(bin ? { binDir: bin.dir } : {}) });
      const subnets = new Set(c.nodes.map((n) => n.subnet));
      assert.equal(subnets.size, 3, `subnets ${[...subnets].join(' ')}`);
      for (const p of c.pods) assert.ok(p.node.subnet !== undefined && p.ip.startsWith(p.node.subnet.split('.').slice(0, 3).join('.')), `${p.name} ${p.ip} in ${p.node.subnet}`);
    });

    it('programs exactly the other nodes in the kernel', async () => {
      assert.ok(c);
      const cl: Cluster = c;
      for (const n of cl.nodes) {
        const others: ClusterNode[] = cl.nodes.filter((o) => o !== n);
        const routes = await weftRoutes(n);
        assert.deepEqual(routes.map((r) => r.dst).sort(), others.map((o) => o.subnet).sort(), `routes on ${n.netns}`);
        if (backend === 'vxlan') {
          for (const r of routes) assert.ok(r.dev === 'flannel.1' && r.flags?.includes('onlink'), `${JSON.stringify(r)} is an onlink route on the VTEP`);
          assert.equal((await vtepNeighs(n)).length, 2);
          assert.deepEqual((await vtepFdb(n)).map((f) => f.dst).sort(), others.map((o) => o.ip).sort());
          const link = await vtepLink(n);
          assert.equal(link?.mtu, 1450, 'VTEP MTU = uplink 1500 - 50');
        } else {
          for (const r of routes) assert.equal(r.dev, 'eth0');
          assert.deepEqual(routes.map((r) => r.gateway).sort(), others.map((o) => o.ip).sort());
        }
      }
    });

    it('/metrics reports leases, programmed entries and reconcile runs; /healthz is 200', async () => {
      assert.ok(c);
      for (const n of c.nodes) {
        const m = await c.metrics(n);
        assert.equal(m.get('weftd_leases'), 3);
        assert.equal(m.get('weftd_programmed_entries{kind="route"}'), 2);
        assert.equal(m.get('weftd_programmed_entries{kind="fdb"}'), backend === 'vxlan' ? 2 : 0);
        assert.ok((m.get('weftd_reconcile_runs_total{trigger="start"}') ?? 0) >= 1);
        assert.equal(m.get('weftd_route_conflicts'), 0);
        assert.equal(m.get('weftd_errors_total') ?? 0, 0);
      }
    });

    it('every pod reaches every pod and node, every node every pod', async () => {
      assert.ok(c);
      const res = await pingMatrix(allProbes(c));
      const failed = res.filter((r) => !r.ok).map((r) => `${r.from}->${r.to}`);
      assert.equal(res.length, 6 * 5 + 6 * 3 + 3 * 6);
      assert.deepEqual(failed, []);
    });
  });
}

void describe('vxlan DirectRouting, net-conf read from etcd (flannel\'s <prefix>/config)', { skip: skipReason({ etcd: true }), timeout: 120_000 }, () => {
  let c: Cluster | undefined;
  after(() => c?.destroy());

  it('peers on the uplink subnet get plain routes via their node address, and everything pings', async () => {
    c = await Cluster.create({ backend: 'vxlan', store: 'etcd', nodes: 3, podsPerNode: 1, backendConf: { DirectRouting: true }, netConfInEtcd: true });
    const cl: Cluster = c;
    assert.doesNotMatch(cl.weftdArgv(cl.nodes[0] as ClusterNode).join(' '), /--net-conf/);
    for (const n of cl.nodes) {
      const routes = await weftRoutes(n);
      assert.equal(routes.length, 2);
      for (const r of routes) assert.equal(r.dev, 'eth0', `${JSON.stringify(r)}: direct route on the uplink`);
      assert.equal((await vtepNeighs(n)).length, 0, 'no neighbour entries needed');
    }
    const res = await pingMatrix(allProbes(cl));
    assert.deepEqual(res.filter((r) => !r.ok).map((r) => `${r.from}->${r.to}`), []);
  });
});

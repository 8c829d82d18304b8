// Issue 17 part 5, must show: on a dual-stack net-conf (EnableIPv6, IPv6Network) with vxlan and
// host-gw, 3 nodes x 2 pods (built binaries, IPv6 underlay addresses): every pod gets an address of
// each family, every pod reaches every pod and node over IPv4 and over IPv6, the kernel holds the
// IPv6 entries of exactly the other nodes (flannel-v6.1 neighbour/FDB/onlink route, or host-gw
// routes via PublicIPv6), and a lease removed from the store is withdrawn on the others, both families.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster, waitFor, type ClusterNode } from '../../../testkit/cluster.ts';
import { canPing, pingMatrix } from '../../../testkit/probe.ts';
import { allProbes, allProbes6, skipReason, vtep6Fdb, vtep6Neighs, weftRoutes, weftRoutes6 } from './helpers.ts';
import { nsExec, nsRun } from '../../../testkit/topology.ts';

const IPV6_NETWORK = 'fd00:10:244::/56';

for (const backend of ['vxlan', 'host-gw'] as const) {
  void describe(`dual stack, ${backend}, file store`, { skip: skipReason(), timeout: 240_000 }, () => {
    let c: Cluster | undefined;
    after(() => c?.destroy());

    it('builds 3 nodes x 2 pods, each pod with an IPv4 and an IPv6 address of its node\'s subnets', async () => {
      c = await Cluster.create({ backend, store: 'file', nodes: 3, podsPerNode: 2, ipv6Network: IPV6_NETWORK });
      assert.equal(new Set(c.nodes.map((n) => n.subnet6)).size, 3, `IPv6 subnets ${c.nodes.map((n) => n.subnet6).join(' ')}`);
      for (const p of c.pods) {
        const sn6 = p.node.subnet6 ?? '?';
        assert.ok(p.ip6 !== undefined && p.ip6.startsWith(sn6.replace(/::\/\d+$/, ':')), `${p.name} ${p.ip6 ?? '-'} in ${sn6}`);
      }
    });

    it('programs the IPv6 side of exactly the other nodes', async () => {
      assert.ok(c);
      for (const n of c.nodes) {
        const others: ClusterNode[] = c.nodes.filter((o) => o !== n);
        const routes = await weftRoutes6(n);
        assert.deepEqual(routes.map((r) => r.dst).sort(), others.map((o) => o.subnet6).sort(), `IPv6 routes on ${n.netns}`);
        assert.equal((await weftRoutes(n)).length, 2, `IPv4 routes on ${n.netns}`);
        if (backend === 'vxlan') {
          for (const r of routes) assert.ok(r.dev === 'flannel-v6.1' && r.flags?.includes('onlink'), `${JSON.stringify(r)} is an onlink route on flannel-v6.1`);
          assert.equal((await vtep6Neighs(n)).length, 2);
          assert.deepEqual((await vtep6Fdb(n)).map((f) => f.dst).sort(), others.map((o) => o.ip6).sort());
        } else {
          for (const r of routes) assert.equal(r.dev, 'eth0');
          assert.deepEqual(routes.map((r) => r.gateway).sort(), others.map((o) => o.ip6).sort());
        }
      }
    });

    it('/metrics counts the entries of both families, with no error', async () => {
      assert.ok(c);
      for (const n of c.nodes) {
        const m = await c.metrics(n);
        assert.equal(m.get('weftd_programmed_entries{kind="route"}'), 4, `${n.netns}: 2 peers x 2 families`);
        assert.equal(m.get('weftd_programmed_entries{kind="fdb"}'), backend === 'vxlan' ? 4 : 0);
        assert.equal(m.get('weftd_programmed_entries{kind="neigh"}'), backend === 'vxlan' ? 4 : 0);
        assert.equal(m.get('weftd_route_conflicts'), 0);
        assert.equal(m.get('weftd_errors_total') ?? 0, 0);
      }
    });

    it('every pod reaches every pod and node over IPv4 and over IPv6, every node every pod', async () => {
      assert.ok(c);
      const v4 = await pingMatrix(allProbes(c));
      const v6 = await pingMatrix(allProbes6(c));
      assert.equal(v4.length, 6 * 5 + 6 * 3 + 3 * 6);
      assert.equal(v6.length, 6 * 5 + 6 * 3 + 3 * 6);
      assert.deepEqual(v4.filter((r) => !r.ok).map((r) => `${r.from}->${r.to}`), []);
      assert.deepEqual(v6.filter((r) => !r.ok).map((r) => `${r.from}->${r.to} (${r.toIp})`), []);
    });

    it('IPv6 masquerade: pod to pod keeps its source (IPv6Network exempt), pod to a node address leaves as its node', async () => {
      assert.ok(c);
      const [a, b] = [c.pods[0], c.pods[c.pods.length - 1]];
      assert.ok(a?.ip6 !== undefined && b?.ip6 !== undefined && a.node !== b.node && b.node.ip6 !== undefined && a.node.ip6 !== undefined);
      const seen = async (netns: string, ip: string, port: number): Promise<string> => {
        // Answers each connection with the address it came from, on IPv6 only.
        c?.topo.spawnIn(netns, ['node', '-e', `require('net').createServer((s)=>s.end(s.remoteAddress)).listen({port:${port},host:'::',ipv6Only:true})`]);
        const client = `const s=require('net').connect(${port},'${ip}');let d='';s.on('data',(x)=>d+=x);s.on('end',()=>process.stdout.write(d));s.on('error',()=>process.exit(1))`;
        let out = '';
        await waitFor(`an answer from [${ip}]:${port}`, async () => {
          const r = await nsExec(a.netns, ['node', '-e', client], { timeoutMs: 5000 });
          out = r.stdout;
          return r.code === 0 && out !== '';
        }, 10_000, 100);
        return out;
      };
      assert.equal(await seen(b.netns, b.ip6, 9998), a.ip6, 'pod to pod: source kept');
      assert.equal(await seen(b.node.netns, b.node.ip6, 9997), a.node.ip6, 'pod to a node address (outside IPv6Network): source is its node');
    });

    it('drift on the IPv6 side is repaired by the running weftd: a deleted route, and (vxlan) a deleted flannel-v6.1', async () => {
      assert.ok(c);
      const cl: Cluster = c;
      const [n1, n2] = cl.nodes as [ClusterNode, ClusterNode];
      const from = cl.pods.find((p) => p.node === n1);
      const to = cl.pods.find((p) => p.node === n2);
      assert.ok(from && to?.ip6 !== undefined);
      const to6: string = to.ip6;
      await nsRun(n1.netns, ['ip', '-6', 'route', 'del', n2.subnet6 ?? '?']);
      await waitFor('IPv6 route restored', async () => (await weftRoutes6(n1)).some((r) => r.dst === n2.subnet6), 10_000, 50);
      if (backend === 'vxlan') {
        const mac = async () => (JSON.parse((await nsExec(n1.netns, ['ip', '-j', 'link', 'show', 'dev', 'flannel-v6.1'])).stdout || '[]') as Array<{ address: string; ifindex: number }>)[0];
        const before = await mac();
        await nsRun(n1.netns, ['ip', 'link', 'del', 'flannel-v6.1']);
        await waitFor('flannel-v6.1 and its entries restored', async () => (await mac()) !== undefined && (await weftRoutes6(n1)).length === 2 &&
          (await vtep6Fdb(n1)).length === 2 && (await vtep6Neighs(n1)).length === 2, 10_000, 50);
        const after = await mac();
        assert.equal(after?.address, before?.address, 'the flannel-v6.1 MAC is stable (peers keep their FDB)');
        assert.notEqual(after?.ifindex, before?.ifindex, 'it really is a new device');
      }
      await waitFor('IPv6 traffic', () => canPing(from.netns, to6), 10_000, 50);
    });

    it('a lease removed from the store is withdrawn on the other nodes, both families', async () => {
      assert.ok(c);
      const cl: Cluster = c;
      const n3 = cl.nodes[2] as ClusterNode;
      // A running weftd would register its lease again: stop it first (SIGTERM keeps the lease).
      await cl.stopWeftd(n3);
      const key = (n3.subnet ?? '').replace('/', '-');
      const files = readdirSync(cl.leaseDir).filter((f) => f === key || f.startsWith(`${key}&`));
      assert.equal(files.length, 1, `lease file of ${key} in ${readdirSync(cl.leaseDir).join(' ')}`);
      rmSync(join(cl.leaseDir, files[0] ?? ''));
      for (const n of cl.nodes.slice(0, 2)) {
        await waitFor(`withdrawal on ${n.netns}`, async () => {
          const r4 = (await weftRoutes(n)).map((r) => r.dst);
          const r6 = (await weftRoutes6(n)).map((r) => r.dst);
          const gone = !r4.includes(n3.subnet ?? '') && !r6.includes(n3.subnet6 ?? '') && r4.length === 1 && r6.length === 1;
          if (backend !== 'vxlan') return gone;
          return gone && (await vtep6Fdb(n)).every((f) => f.dst !== n3.ip6) && (await vtep6Neighs(n)).length === 1;
        }, 10_000, 100);
      }
      // The remaining pair still talks over IPv6.
      const [a, b] = cl.pods.filter((p) => p.node !== n3 && p.node !== cl.nodes[0]).concat(cl.pods.filter((p) => p.node === cl.nodes[0]));
      assert.ok(a?.ip6 !== undefined && b?.ip6 !== undefined);
      assert.equal((await nsExec(a.netns, ['ping', '-6', '-c', '1', '-W', '2', '-n', '-q', b.ip6])).code, 0);
    });
  });
}

void describe('dual stack, vxlan DirectRouting, file store', { skip: skipReason(), timeout: 180_000 }, () => {
  let c: Cluster | undefined;
  after(() => c?.destroy());

  it('peers on the uplink prefixes get plain routes via PublicIP / PublicIPv6, no VTEP entries, and pods ping over IPv6', async () => {
    c = await Cluster.create({ backend: 'vxlan', store: 'file', nodes: 3, podsPerNode: 1, ipv6Network: IPV6_NETWORK, backendConf: { DirectRouting: true } });
    for (const n of c.nodes) {
      const others: ClusterNode[] = c.nodes.filter((o: ClusterNode) => o !== n);
      const routes = await weftRoutes6(n);
      assert.deepEqual(routes.map((r) => [r.dst, r.gateway, r.dev]).sort(), others.map((o) => [o.subnet6, o.ip6, 'eth0']).sort(), `${n.netns}: direct IPv6 routes`);
      assert.equal((await vtep6Neighs(n)).length + (await vtep6Fdb(n)).length, 0, 'no flannel-v6.1 entries needed');
    }
    const v6 = await pingMatrix(allProbes6(c));
    assert.deepEqual(v6.filter((r) => !r.ok).map((r) => `${r.from}->${r.to} (${r.toIp})`), []);
  });
});

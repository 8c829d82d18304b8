// Issue 5, must show: a deleted VTEP or route is restored and traffic resumes within 2 s; a restart
// of weftd with nothing broken deletes and re-adds nothing; SIGTERM leaves the data plane up; a
// lease deleted from the store is withdrawn (route, FDB, neighbour) on the other nodes within 2 s.
// Convergence is polled every 20 ms up to 2 s + 1 s slack; measured figures go to the diagnostics.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster, waitFor, type ClusterNode, type ClusterPod } from '../../../testkit/cluster.ts';
import { nsExec, nsRun } from '../../../testkit/topology.ts';
import { pingOnce, skipReason, vtepFdb, vtepLink, vtepNeighs, weftRoutes } from './helpers.ts';

const LIMIT_MS = 3000; // the 2 s plus 1 s of slack for polling and a loaded machine

function podOn(c: Cluster, n: ClusterNode): ClusterPod {
  const p = c.pods.find((x) => x.node === n);
  assert.ok(p, `a pod on ${n.netns}`);
  return p;
}

/** Fully programmed towards `peer` on `n` (vxlan: route + neighbour + FDB; host-gw: route). */
async function programmed(n: ClusterNode, peer: ClusterNode, vxlan: boolean): Promise<boolean> {
  const routes = await weftRoutes(n);
  if (!routes.some((r) => r.dst === peer.subnet)) return false;
  if (!vxlan) return true;
  const vtepIp = peer.subnet?.replace(/\/\d+$/, '');
  return (await vtepNeighs(n)).some((x) => x.dst === vtepIp) && (await vtepFdb(n)).some((f) => f.dst === peer.ip);
}

async function withdrawn(n: ClusterNode, peer: ClusterNode): Promise<boolean> {
  const vtepIp = peer.subnet?.replace(/\/\d+$/, '');
  return !(await weftRoutes(n)).some((r) => r.dst === peer.subnet) && !(await vtepNeighs(n)).some((x) => x.dst === vtepIp) &&
    !(await vtepFdb(n)).some((f) => f.dst === peer.ip);
}

void describe('vxlan recovery (file store)', { skip: skipReason(), timeout: 180_000 }, () => {
  let c: Cluster;
  before(async () => { c = await Cluster.create({ backend: 'vxlan', store: 'file', nodes: 3, podsPerNode: 2 }); });
  after(() => c?.destroy());

  it('a deleted VTEP is back, fully programmed, and traffic resumes within 2 s', async (t) => {
    const [n1, n2, n3] = c.nodes as [ClusterNode, ClusterNode, ClusterNode];
    const from = podOn(c, n1);
    const to = podOn(c, n2);
    assert.ok(await pingOnce(from.netns, to.ip), 'traffic before');
    const before = await vtepLink(n1);
    await nsRun(n1.netns, ['ip', 'link', 'del', 'flannel.1']);
    const t0 = performance.now();
    const restored = await waitFor('VTEP and entries restored', async () => (await vtepLink(n1)) !== null && await programmed(n1, n2, true) && await programmed(n1, n3, true), LIMIT_MS, 20);
    const resumed = await waitFor('traffic', () => pingOnce(from.netns, to.ip), LIMIT_MS - (performance.now() - t0), 20) + restored;
    const after = await vtepLink(n1);
    assert.equal(after?.address, before?.address, 'the VTEP MAC is stable (peers keep their FDB)');
    assert.notEqual(after?.ifindex, before?.ifindex, 'it really is a new device');
    t.diagnostic(`VTEP restored in ${restored.toFixed(0)} ms, traffic resumed after ${resumed.toFixed(0)} ms`);
  });

  it('an uplink flap is repaired: routes and traffic back within 2 s of link up', async (t) => {
    const [n1, n2, n3] = c.nodes as [ClusterNode, ClusterNode, ClusterNode];
    await nsRun(n1.netns, ['ip', 'link', 'set', 'eth0', 'down']);
    await new Promise((r) => setTimeout(r, 300));
    await nsRun(n1.netns, ['ip', 'link', 'set', 'eth0', 'up']);
    const t0 = performance.now();
    const ms = await waitFor('entries back', async () => await programmed(n1, n2, true) && await programmed(n1, n3, true), LIMIT_MS, 20);
    await waitFor('traffic', () => pingOnce(podOn(c, n1).netns, podOn(c, n2).ip), LIMIT_MS - (performance.now() - t0), 20);
    t.diagnostic(`entries present ${ms.toFixed(0)} ms after link up, traffic after ${(performance.now() - t0).toFixed(0)} ms`);
  });

  it('a deleted route is back and traffic resumes within 2 s', async (t) => {
    const [n1, n2] = c.nodes as [ClusterNode, ClusterNode];
    const from = podOn(c, n1);
    const to = podOn(c, n2);
    await nsRun(n1.netns, ['ip', 'route', 'del', n2.subnet ?? '']);
    const t0 = performance.now();
    const restored = await waitFor('route restored', () => programmed(n1, n2, true), LIMIT_MS, 20);
    await waitFor('traffic', () => pingOnce(from.netns, to.ip), LIMIT_MS - (performance.now() - t0), 20);
    t.diagnostic(`route restored in ${restored.toFixed(0)} ms, traffic after ${(performance.now() - t0).toFixed(0)} ms`);
  });

  it('SIGTERM leaves the data plane up; a restart deletes and re-adds nothing', async () => {
    const [n1, n2] = c.nodes as [ClusterNode, ClusterNode];
    const from = podOn(c, n1);
    const to = podOn(c, n2);
    const others = c.nodes.filter((n) => n !== n1).map((n) => (n.subnet ?? '').replace(/\.0\/\d+$/, '.'));
    const monitor = c.topo.spawnIn(n1.netns, ['ip', 'monitor', 'route', 'neigh', 'link']);
    let seen = '';
    assert.ok(monitor.stdout, 'the monitor output must be readable');
    monitor.stdout.on('data', (d: Buffer) => { seen += d.toString(); });
    // Prove the monitor is listening (else the final check would pass vacuously): a marker route
    // added and removed by hand must show up in its output.
    await waitFor('ip monitor to listen', async () => {
      await nsExec(n1.netns, ['ip', 'route', 'replace', '198.51.100.77/32', 'dev', 'lo']);
      await nsExec(n1.netns, ['ip', 'route', 'del', '198.51.100.77/32', 'dev', 'lo']);
      return seen.includes('198.51.100.77');
    }, 5000, 100);
    const subnet = n1.subnet;
    const routesBefore = await weftRoutes(n1);
    assert.equal(await c.stopWeftd(n1, 'SIGTERM'), 0, 'clean exit on SIGTERM');
    assert.deepEqual(await weftRoutes(n1), routesBefore, 'routes stay while weftd is down');
    assert.ok(await pingOnce(from.netns, to.ip), 'traffic while weftd is down');
    const logBefore = c.weftdLog(n1).length;
    await c.startWeftd(n1);
    assert.equal(n1.subnet, subnet, 'the same subnet after restart');
    await new Promise((r) => setTimeout(r, 1500)); // a start pass and at least one periodic pass
    monitor.kill();
    // Our entries: routes/neighbours of the other nodes' subnets, and the VTEP link itself (kernel
    // IPv6 link-local housekeeping on flannel.1 is not ours and may show up at any time).
    const touched = seen.split('\n').filter((l) => others.some((p) => l.includes(p)) || /^(Deleted )?\d+: flannel\.1[:@]/.test(l));
    assert.deepEqual(touched, [], 'no route, neighbour or VTEP change during the restart');
    assert.doesNotMatch(c.weftdLog(n1).slice(logBefore), /"msg":"programmed"/);
    assert.ok(await pingOnce(from.netns, to.ip));
  });

  it('a lease deleted from the store is withdrawn on the other nodes within 2 s', async (t) => {
    const [n1, n2, n3] = c.nodes as [ClusterNode, ClusterNode, ClusterNode];
    // Stop n3's weftd first: a running weftd would notice its lease gone and register again.
    assert.equal(await c.stopWeftd(n3), 0);
    rmSync(join(c.leaseDir, (n3.subnet ?? '').replace('/', '-')));
    const t0 = performance.now();
    const ms = await waitFor('n3 withdrawn on n1 and n2', async () => await withdrawn(n1, n3) && await withdrawn(n2, n3), LIMIT_MS, 20);
    t.diagnostic(`lease removal withdrawn on both peers in ${ms.toFixed(0)} ms`);
    assert.ok(await programmed(n1, n2, true), 'other peers untouched');
    // n3 comes back and takes its old subnet (remembered in subnet.env); peers re-program it.
    await c.startWeftd(n3);
    await waitFor('n3 back on n1', () => programmed(n1, n3, true), 5000);
    assert.ok(await pingOnce(podOn(c, n1).netns, podOn(c, n3).ip));
    t.diagnostic(`total ${(performance.now() - t0).toFixed(0)} ms including n3's restart`);
  });
});

void describe('host-gw recovery (file store)', { skip: skipReason(), timeout: 120_000 }, () => {
  let c: Cluster;
  before(async () => { c = await Cluster.create({ backend: 'host-gw', store: 'file', nodes: 3, podsPerNode: 2 }); });
  after(() => c?.destroy());

  it('a deleted route is back and traffic resumes within 2 s', async (t) => {
    const [n1, n2] = c.nodes as [ClusterNode, ClusterNode];
    await nsRun(n1.netns, ['ip', 'route', 'del', n2.subnet ?? '']);
    const t0 = performance.now();
    const restored = await waitFor('route restored', () => programmed(n1, n2, false), LIMIT_MS, 20);
    await waitFor('traffic', () => pingOnce(podOn(c, n1).netns, podOn(c, n2).ip), LIMIT_MS - (performance.now() - t0), 20);
    t.diagnostic(`route restored in ${restored.toFixed(0)} ms`);
  });

  it('an uplink flap (the kernel flushes routes via eth0) is repaired within 2 s of link up', async (t) => {
    const [n1, n2, n3] = c.nodes as [ClusterNode, ClusterNode, ClusterNode];
    await nsRun(n1.netns, ['ip', 'link', 'set', 'eth0', 'down']);
    await waitFor('routes flushed by the kernel', async () => (await weftRoutes(n1)).length === 0, 5000, 20);
    await nsRun(n1.netns, ['ip', 'link', 'set', 'eth0', 'up']);
    const t0 = performance.now();
    const ms = await waitFor('routes back', async () => await programmed(n1, n2, false) && await programmed(n1, n3, false), LIMIT_MS, 20);
    await waitFor('traffic', () => pingOnce(podOn(c, n1).netns, podOn(c, n2).ip), LIMIT_MS - (performance.now() - t0), 20);
    t.diagnostic(`routes back ${ms.toFixed(0)} ms after link up`);
  });

  it('never deletes a route it did not create, and leaves a conflicting one alone', async () => {
    const [n1] = c.nodes as [ClusterNode];
    await nsRun(n1.netns, ['ip', 'route', 'add', '10.244.250.0/24', 'via', '192.0.2.99', 'dev', 'eth0']);
    await new Promise((r) => setTimeout(r, 1500));
    const out = await nsRun(n1.netns, ['ip', 'route', 'show', '10.244.250.0/24']);
    assert.match(out, /via 192\.0\.2\.99/);
  });
});

// Issue 5, must show: etcd stopped for 30 s: pod traffic continues; weftd reconnects (a lease
// written after the outage is programmed, its removal withdrawn) and every node keeps its lease.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Cluster, waitFor, type ClusterNode } from '../../../testkit/cluster.ts';
import { nsRun } from '../../../testkit/topology.ts';
import { pingOnce, skipReason, weftRoutes } from './helpers.ts';

const OUTAGE_MS = Number(process.env['WEFT_ETCD_OUTAGE_MS'] ?? 30_000);
const PREFIX = '/coreos.com/network/subnets/';

async function etcdctl(c: Cluster, args: string[]): Promise<string> {
  assert.ok(c.etcd);
  return nsRun(c.etcd.netns, ['env', 'ETCDCTL_API=3', 'etcdctl', '--endpoints', c.etcd.url, ...args]);
}

/** key -> value of every lease in etcd. */
async function leases(c: Cluster): Promise<Map<string, string>> {
  const lines = (await etcdctl(c, ['get', '--prefix', PREFIX])).split('\n').filter(Boolean);
  const m = new Map<string, string>();
  for (let i = 0; i + 1 < lines.length; i += 2) m.set(lines[i] as string, lines[i + 1] as string);
  return m;
}

void describe('etcd outage (vxlan, etcd store)', { skip: skipReason({ etcd: true }), timeout: OUTAGE_MS + 120_000 }, () => {
  let c: Cluster;
  before(async () => { c = await Cluster.create({ backend: 'vxlan', store: 'etcd', nodes: 3, podsPerNode: 2 }); });
  after(() => c?.destroy());

  it(`pod traffic continues while etcd is down for ${OUTAGE_MS / 1000} s; weftd reconnects and keeps its lease`, async (t) => {
    const before = await leases(c);
    assert.equal(before.size, 3);
    for (const n of c.nodes) assert.ok([...before.values()].some((v) => v.includes(`"PublicIP":"${n.ip}"`)), `lease of ${n.ip} in etcd`);
    const envs = c.nodes.map((n) => readFileSync(n.subnetFile, 'utf8'));
    const pairs = c.pods.flatMap((a) => c.pods.filter((b) => b.node !== a.node).map((b) => [a, b] as const));
    assert.ok(c.etcd);
    await c.etcd.stop();
    const t0 = Date.now();
    let probes = 0;
    const failures: string[] = [];
    while (Date.now() - t0 < OUTAGE_MS) {
      const [a, b] = pairs[probes % pairs.length] as (typeof pairs)[number];
      probes++;
      if (!(await pingOnce(a.netns, b.ip)) && !(await pingOnce(a.netns, b.ip))) failures.push(`${a.name}->${b.name} at ${Date.now() - t0} ms`);
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.deepEqual(failures, [], `${probes} probes during the outage`);
    await c.etcd.start();
    t.diagnostic(`${probes} cross-node pings during a ${OUTAGE_MS} ms outage, none lost`);

    // Reconnected: a lease written now reaches every node, and its removal too.
    const fake = `${PREFIX}10.244.250.0-24`;
    const t1 = performance.now();
    await etcdctl(c, ['put', fake, '{"PublicIP":"192.0.2.99","BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"0e:00:00:00:00:99"}}']);
    const has = async (n: ClusterNode) => (await weftRoutes(n)).some((r) => r.dst === '10.244.250.0/24');
    await waitFor('the new lease programmed on every node', async () => (await Promise.all(c.nodes.map(has))).every(Boolean), 30_000, 100);
    t.diagnostic(`watch resumed: a lease written after the outage was programmed everywhere in ${(performance.now() - t1).toFixed(0)} ms`);
    await etcdctl(c, ['del', fake]);
    await waitFor('the removed lease withdrawn on every node', async () => !(await Promise.all(c.nodes.map(has))).some(Boolean), 10_000, 100);

    const afterLeases = await leases(c);
    assert.deepEqual([...afterLeases.keys()].sort(), [...before.keys()].sort(), 'same lease keys');
    for (const [k, v] of before) assert.equal(JSON.parse(afterLeases.get(k) ?? '{}').PublicIP, JSON.parse(v).PublicIP, `${k} keeps its node`);
    c.nodes.forEach((n, i) => assert.equal(readFileSync(n.subnetFile, 'utf8'), envs[i], `subnet.env of ${n.netns} unchanged`));
    for (const n of c.nodes) assert.doesNotMatch(c.weftdLog(n), /own lease was lost/);
    const [a, b] = pairs[0] as (typeof pairs)[number];
    assert.ok(await pingOnce(a.netns, b.ip));
  });
});

// Issue 18: weftd --kube-subnet-mgr against a real kube-apiserver (built by scripts/kube-setup.sh,
// with its own etcd, in a namespace on the underlay): 3 vxlan nodes created through the API with
// their podCIDRs, 1 pod each. Pods connect across nodes; a restarted weftd changes nothing, also when
// it finds its node through its pod (POD_NAMESPACE/POD_NAME, no NODE_NAME); 30 s
// without the API server leave the data plane working and weftd catches up afterwards; a Node
// deleted through the API has its routes withdrawn. Kernel state is read in the node namespaces.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster, kubePodCidr, waitFor, type ClusterNode, type ClusterPod } from '../../../testkit/cluster.ts';
import { kubeBinariesPresent, type KubeApiServer } from '../../../testkit/kube-apiserver.ts';
import { pingOnce, skipReason } from './helpers.ts';
import { P, fakeNode, monitorRoutes, routeTable } from './kube-helpers.ts';

/** The bound: a Node deleted through the API is withdrawn on every node within 2 s. */
const WITHDRAW_MS = 2000;
const NETWORK = '10.244.0.0/16';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const skip = skipReason() || (kubeBinariesPresent() ? false : 'kube-apiserver not built: run scripts/kube-setup.sh');

function crossPairs(c: Cluster): Array<readonly [ClusterPod, ClusterPod]> {
  return c.pods.flatMap((a) => c.pods.filter((b) => b.node !== a.node).map((b) => [a, b] as const));
}

async function unreachable(c: Cluster): Promise<string[]> {
  const bad: string[] = [];
  for (const [a, b] of crossPairs(c)) if (!(await pingOnce(a.netns, b.ip)) && !(await pingOnce(a.netns, b.ip))) bad.push(`${a.name}->${b.name}`);
  return bad;
}

/**
 * Deletes Node `name` and returns, per watching node, the ms from the DELETE request to the kernel's
 * notification of the route withdrawal (ip -ts monitor), so the test's own polling adds nothing.
 */
async function timedWithdrawal(c: Cluster, kube: KubeApiServer, name: string, subnet: string, watchers: ClusterNode[]): Promise<number[]> {
  const mons = await monitorRoutes(c, watchers);
  try {
    const t0 = Date.now();
    await kube.deleteNode(name);
    await waitFor(`${name}'s route withdrawn on every watching node`, async () => (await routeTable(c, watchers)).every((t) => !t.some((r) => r.startsWith(`${subnet} `))), 10_000, 50);
    await sleep(200); // the monitors' last lines
    return mons.map((m) => (m.deletedAt(subnet) ?? Number.POSITIVE_INFINITY) - t0);
  } finally {
    for (const m of mons) m.stop();
  }
}

void describe('weftd --kube-subnet-mgr with a real kube-apiserver', { skip }, () => {
  let c: Cluster;
  before(async () => {
    c = await Cluster.create({ backend: 'vxlan', store: 'kube', nodes: 3, podsPerNode: 1, network: NETWORK, onProgress: (m) => process.stderr.write(`  ${m}\n`) });
  }, { timeout: 240_000 });
  after(() => c?.destroy());

  void it('takes each node\'s podCIDR, publishes flannel\'s annotations and connects pods across nodes', async () => {
    assert.ok(c.kube);
    for (const n of c.nodes) {
      assert.equal(n.subnet, kubePodCidr(NETWORK, n.id), `${n.netns} subnet`);
      const node = await c.kube.call('GET', `/api/v1/nodes/${n.netns}`) as { metadata: { annotations: Record<string, string> }; status: { conditions?: Array<{ type: string; status: string }> } };
      const a = node.metadata.annotations;
      assert.equal(a[`${P}/public-ip`], n.ip);
      assert.equal(a[`${P}/backend-type`], 'vxlan');
      assert.equal(a[`${P}/kube-subnet-manager`], 'true');
      assert.equal((JSON.parse(a[`${P}/backend-data`] ?? '{}') as { VNI?: number }).VNI, 1);
      assert.equal(node.status.conditions?.find((x) => x.type === 'NetworkUnavailable')?.status, 'False');
    }
    await waitFor('every node routes to its 2 peers', async () => (await routeTable(c)).every((t) => t.length === 2), 10_000, 100);
    assert.deepEqual(await unreachable(c), []);
  });

  void it('a restarted weftd changes nothing', async () => {
    assert.ok(c.kube);
    const n = c.nodes[0];
    assert.ok(n);
    const before = { routes: await routeTable(c), env: readFileSync(n.subnetFile, 'utf8'), node: await c.kube.call('GET', `/api/v1/nodes/${n.netns}`) };
    await c.stopWeftd(n);
    const logBefore = c.weftdLog(n).length;
    await c.startWeftd(n);
    await sleep(1500);
    assert.deepEqual(await routeTable(c), before.routes);
    assert.equal(readFileSync(n.subnetFile, 'utf8'), before.env);
    const after = await c.kube.call('GET', `/api/v1/nodes/${n.netns}`) as { metadata: { annotations: unknown } };
    assert.deepEqual(after.metadata.annotations, (before.node as { metadata: { annotations: unknown } }).metadata.annotations);
    const changes = c.weftdLog(n).slice(logBefore).split('\n').filter((l) => l.includes('"msg":"programmed"'));
    assert.deepEqual(changes, [], 'the restarted weftd re-programmed something');
    assert.deepEqual(await unreachable(c), []);
  });

  void it('without NODE_NAME finds its node through POD_NAMESPACE/POD_NAME (flanneld\'s fallback)', async () => {
    const kube = c.kube;
    const n = c.nodes[1];
    assert.ok(kube && n);
    // No controller-manager here: the namespace's default service account the admission wants is made by hand.
    await kube.curl('POST', '/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
    const pod = `weft-${n.netns}`;
    await kube.call('POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: pod }, spec: { nodeName: n.netns, containers: [{ name: 'weftd', image: 'weft:test' }] },
    });
    const routes = await routeTable(c);
    await c.stopWeftd(n);
    const logBefore = c.weftdLog(n).length;
    const argv = c.weftdArgv(n).filter((a) => !a.startsWith('NODE_NAME='));
    argv.splice(1, 0, `POD_NAME=${pod}`, 'POD_NAMESPACE=default');
    const proc = c.topo.spawnIn(n.netns, argv, join(n.dir, 'weftd.log'));
    n.weftd = proc;
    await waitFor('weftd found its lease', () => {
      if (proc.exitCode !== null) throw new Error(`weftd exited: ${c.weftdLog(n).slice(logBefore)}`);
      return c.weftdLog(n).slice(logBefore).includes('"msg":"weftd running"');
    }, 20_000, 100);
    const acquired = c.weftdLog(n).slice(logBefore).split('\n').find((l) => l.includes('"msg":"lease acquired"'));
    assert.equal((JSON.parse(acquired ?? '{}') as { subnet?: string }).subnet, n.subnet, 'the lease of its own node');
    await sleep(500);
    assert.deepEqual(await routeTable(c), routes);
    assert.deepEqual(await unreachable(c), []);
  });

  void it('keeps the data plane through 30 s without the API server and catches up afterwards', async () => {
    const kube = c.kube;
    assert.ok(kube);
    await kube.stop();
    const failures: string[] = [];
    const t0 = Date.now();
    while (Date.now() - t0 < 30_000) {
      failures.push(...await unreachable(c));
      await sleep(500);
    }
    assert.deepEqual(failures, [], 'pod traffic failed while the API server was down');
    assert.ok(c.nodes.every((n) => n.weftd?.exitCode === null), 'a weftd exited during the outage');
    await kube.start();
    // Catching up: a node added after the outage reaches every weftd through its new list + watch.
    await kube.call('POST', '/api/v1/nodes', fakeNode('weft-fake-1', '10.244.77.0/24', '192.0.2.77'));
    // No bound from the issue here: weftd re-lists on its reconnect back-off (up to 5 s).
    await waitFor('the new node routed on every node', async () => (await routeTable(c)).every((t) => t.some((r) => r.startsWith('10.244.77.0/24 '))), 15_000, 50);
    assert.deepEqual(await unreachable(c), []);
  });

  void it('withdraws the routes of a node deleted through the API', async () => {
    const kube = c.kube;
    assert.ok(kube);
    if (!(await routeTable(c)).every((t) => t.some((r) => r.startsWith('10.244.77.0/24 ')))) {
      await kube.call('POST', '/api/v1/nodes', fakeNode('weft-fake-1', '10.244.77.0/24', '192.0.2.77'));
      await waitFor('the fake node routed everywhere', async () => (await routeTable(c)).every((t) => t.some((r) => r.startsWith('10.244.77.0/24 '))), 10_000, 50);
    }
    const fake = await timedWithdrawal(c, kube, 'weft-fake-1', '10.244.77.0/24', c.nodes);
    assert.ok(fake.every((ms) => ms <= WITHDRAW_MS), `fake node withdrawn after ${fake.join(', ')} ms (bound ${WITHDRAW_MS})`);
    // A real node deleted: the two others drop it (its own weftd keeps running, as flanneld would).
    const gone = c.nodes[2];
    assert.ok(gone?.subnet);
    const real = await timedWithdrawal(c, kube, gone.netns, gone.subnet, c.nodes.slice(0, 2));
    assert.ok(real.every((ms) => ms <= WITHDRAW_MS), `real node withdrawn after ${real.join(', ')} ms (bound ${WITHDRAW_MS})`);
    process.stderr.write(`  withdrawal after DELETE (kernel timestamps): fake ${fake.join(', ')} ms; real ${real.join(', ')} ms\n`);
    const [a, b] = c.pods;
    assert.ok(a && b);
    assert.equal(await pingOnce(a.netns, b.ip), true, 'the remaining nodes still connect');
  });
});

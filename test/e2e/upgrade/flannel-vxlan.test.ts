// Upgrade in place, flannel-vxlan with weftd (issue 20): a two-node cluster runs the previous release
// (weftd, flannel-vxlan + portmap); weftd is replaced by this build's on every node (SIGTERM, start the
// new one on the same lease store and subnet.env); the pods keep their address and cross-node
// connectivity; this build CHECKs and DELs the old pods, and the previous release DELs a pod this
// build added, with nothing left (IPAM files, flannel delegate files, host veths, masquerade elements).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { rootOnly } from '../../../testkit/netns.ts';
import { CniRunner } from '../../../testkit/cni-runner.ts';
import { Cluster, waitFor, type ClusterNode, type ClusterPod } from '../../../testkit/cluster.ts';
import { nsExec } from '../../../testkit/topology.ts';
import { hostVeths, nftElements, reservations } from '../reliability/harness.ts';
import { borrowNetns, builds, handOver, ping, podAddrs } from './helpers.ts';

/** Replaces the node's weftd by the one in `binDir`, same flags; waits for /healthz. */
async function swapWeftd(c: Cluster, n: ClusterNode, binDir: string): Promise<void> {
  assert.equal(await c.stopWeftd(n, 'SIGTERM'), 0, 'the old weftd exits cleanly on SIGTERM');
  const proc = c.topo.spawnIn(n.netns, [join(binDir, 'weftd'), ...c.weftdArgv(n).slice(1)], join(n.dir, 'weftd.log'));
  n.weftd = proc;
  await waitFor(`new weftd on ${n.netns}`, async () => {
    if (proc.exitCode !== null) throw new Error(`new weftd exited with ${proc.exitCode}: ${c.weftdLog(n).slice(-2000)}`);
    return (await nsExec(n.netns, ['curl', '-fsS', '--max-time', '1', 'http://127.0.0.1:9101/healthz'])).code === 0;
  }, 20_000, 100);
}

/** What the node's network `weft` holds for pods: IPAM files, flannel delegate files, host veths, masquerade elements. */
async function nodeLeftovers(n: ClusterNode): Promise<string[]> {
  const out: string[] = [];
  for (const [ip, id] of reservations(join(n.dir, 'ipam'), 'weft')) out.push(`${n.netns}: IPAM ${ip} held by ${id}`);
  const fl = join(n.dir, 'flannel');
  if (existsSync(fl)) for (const f of readdirSync(fl)) out.push(`${n.netns}: flannel delegate file ${f}`);
  const node = borrowNetns(n.netns);
  for (const v of await hostVeths(node)) if (v !== n.uplink) out.push(`${n.netns}: host veth ${v}`);
  for (const e of await nftElements(node, /^(bridge-pods|portmap)/)) out.push(`${n.netns}: nft element ${e}`);
  return out;
}

describe('upgrade in place: flannel-vxlan pods and weftd', rootOnly(), () => {
  let c: Cluster;
  let bins: { prev: string; next: string };

  before(async () => {
    bins = builds();
    c = await Cluster.create({ backend: 'vxlan', store: 'file', nodes: 2, podsPerNode: 1, binDir: bins.prev, portmap: true });
  });
  after(() => c.destroy());

  test('old pods keep address and connectivity across a weftd upgrade; new CHECK/DEL, old DEL of a new pod; nothing left', async () => {
    const [p1, p2] = c.pods as [ClusterPod, ClusterPod];
    assert.ok(await ping(p1.netns, p2.ip), 'cross-node traffic on the previous release');
    const addrs = [await podAddrs(p1.netns), await podAddrs(p2.netns)];
    for (const n of c.nodes) await swapWeftd(c, n, bins.next);
    await waitFor('cross-node traffic after the weftd upgrade', () => ping(p1.netns, p2.ip), 10_000, 200);
    assert.deepEqual([await podAddrs(p1.netns), await podAddrs(p2.netns)], addrs, 'pods keep their addresses');

    // This build takes over the runtime's cached results and checks, then deletes, the old pods.
    const newRunners = c.nodes.map((n) => new CniRunner(n.runner.conf, { binDirs: [bins.next], nodeNetns: n.netns, timeoutMs: 60_000 }));
    for (const p of [p1, p2]) {
      const i = c.nodes.indexOf(p.node);
      const a = { containerId: p.containerId, netns: p.path, ifName: 'eth0' };
      handOver(p.node.runner, newRunners[i] as CniRunner, a);
      await (newRunners[i] as CniRunner).check(a);
    }
    // Reverse: a pod added by this build (on node 1, beside the old one) is deleted by the previous release.
    const extra = await c.topo.addPod(c.nodes[0] as ClusterNode, 9);
    const xa = { containerId: `${c.topo.prefix}-new`, netns: extra.path, ifName: 'eth0' };
    const res = await (newRunners[0] as CniRunner).add(xa);
    const xip = (res['ips'] as Array<{ address: string }>)[0]?.address.split('/')[0] ?? '';
    assert.ok(await ping(p2.netns, xip), 'the new pod is reachable from the old pod on the other node');
    handOver(newRunners[0] as CniRunner, (c.nodes[0] as ClusterNode).runner, xa);
    await (c.nodes[0] as ClusterNode).runner.del(xa);
    for (const p of [p1, p2]) await (newRunners[c.nodes.indexOf(p.node)] as CniRunner).del({ containerId: p.containerId, netns: p.path, ifName: 'eth0' });
    const left: string[] = [];
    for (const n of c.nodes) left.push(...(await nodeLeftovers(n)));
    for (const p of [p1.netns, p2.netns, extra.netns]) for (const a of await podAddrs(p)) left.push(`pod ${p} still has ${a}`);
    assert.deepEqual(left, []);
  });
});

// Issue 27 item 1, must show: on every backend, a 3-node cluster where node 1 has `iptables -P
// FORWARD DROP` (iptables-nft's `ip filter FORWARD`, as Docker sets it) and node 2 a native nftables
// `inet host forward` chain with policy drop, inside the node namespaces: pods on every node reach
// each other because weftd appends its tagged accepts to those chains; with
// --iptables-forward-rules=false weftd removes them and cross-node pod traffic through those nodes
// is dropped (the test can fail); the accepts come back after an `iptables -F` / `nft flush chain`,
// and their number stays constant over resyncs. On a dual-stack cluster the IPv6Network gets the
// same accepts (ip6tables' `ip6 filter FORWARD`, the inet chain's ip6 pair).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster, waitFor, type ClusterNode, type ClusterPod } from '../../../testkit/cluster.ts';
import { canPing, pingMatrix, type Probe } from '../../../testkit/probe.ts';
import { nsRun } from '../../../testkit/topology.ts';
import { FORWARD_RESYNC_MS, FORWARD_TAG } from '../../../agent/forward-rules.ts';
import { pingOnce, skipReason } from './helpers.ts';
import { doctor, problemsOf } from '../doctor/helpers.ts';

/** weftd's accepts in node 1's `ip filter FORWARD` (iptables' view) and node 2's `inet host forward` (nft's). */
async function weftdRules(c: Cluster): Promise<{ ipt: number; nft: number }> {
  const [n1, n2] = c.nodes as [ClusterNode, ClusterNode];
  const ipt = (await nsRun(n1.netns, ['iptables', '-S', 'FORWARD'])).split('\n').filter((l) => l.includes(`"${FORWARD_TAG}:`)).length;
  const nft = (await nsRun(n2.netns, ['nft', 'list', 'chain', 'inet', 'host', 'forward'])).split('\n').filter((l) => l.includes(`"${FORWARD_TAG}:`)).length;
  return { ipt, nft };
}

/** Every pod to every pod of another node. */
function crossNode(c: Cluster): Probe[] {
  const out: Probe[] = [];
  for (const a of c.pods) for (const b of c.pods) if (a.node !== b.node) out.push({ from: a.name, to: b.name, toIp: b.ip, fromNetns: a.netns });
  return out;
}

async function failing(c: Cluster): Promise<string[]> {
  return (await pingMatrix(crossNode(c))).filter((r) => !r.ok).map((r) => `${r.from}->${r.to}`);
}

async function restartWeftd(c: Cluster, nodes: ClusterNode[], extra: string[]): Promise<void> {
  for (const n of nodes) {
    await c.stopWeftd(n);
    await c.startWeftd(n, extra);
  }
}

for (const backend of ['vxlan', 'host-gw', 'udp'] as const) {
  void describe(`FORWARD policy drop, ${backend}: iptables on node 1, native nftables on node 2`, { skip: skipReason(), timeout: 240_000 }, () => {
    let c: Cluster;
    before(async () => {
      c = await Cluster.create({ backend, store: 'file', nodes: 3, podsPerNode: 1, delegate: { ipMasq: false } });
      const [n1, n2] = c.nodes as [ClusterNode, ClusterNode];
      await nsRun(n1.netns, ['iptables', '-P', 'FORWARD', 'DROP']);
      await nsRun(n2.netns, ['nft', 'add', 'table', 'inet', 'host']);
      await nsRun(n2.netns, ['nft', 'add', 'chain', 'inet', 'host', 'forward', '{ type filter hook forward priority 0; policy drop; }']);
    });
    after(() => c?.destroy());

    it('weftd appends its accepts to both foreign chains; every pod reaches every pod', async (t) => {
      const ms = await waitFor('weftd accepts in both chains', async () => { const r = await weftdRules(c); return r.ipt === 2 && r.nft === 2; }, 3 * FORWARD_RESYNC_MS, 200);
      t.diagnostic(`accepts present ${ms.toFixed(0)} ms after the drops were set`);
      assert.deepEqual(await failing(c), []);
      for (const n of c.nodes) assert.doesNotMatch(c.weftdLog(n), /"level":"(warn|error)"/, `${n.netns}: weftd warnings`);
      for (const n of c.nodes.slice(0, 2)) {
        const r = await doctor(c, n);
        assert.equal(r.checks.find((x) => x.check === 'forward')?.status, 'ok', `${n.netns}: doctor forward check`);
      }
    });

    it('the number of accepts stays constant over resyncs, and they come back after iptables -F / nft flush chain', async () => {
      await new Promise((r) => setTimeout(r, 2 * FORWARD_RESYNC_MS + 500));
      assert.deepEqual(await weftdRules(c), { ipt: 2, nft: 2 });
      const [n1, n2] = c.nodes as [ClusterNode, ClusterNode];
      await nsRun(n1.netns, ['iptables', '-F', 'FORWARD']);
      await nsRun(n2.netns, ['nft', 'flush', 'chain', 'inet', 'host', 'forward']);
      assert.deepEqual(await weftdRules(c), { ipt: 0, nft: 0 });
      await waitFor('accepts re-added', async () => { const r = await weftdRules(c); return r.ipt === 2 && r.nft === 2; }, 3 * FORWARD_RESYNC_MS, 200);
      await new Promise((r) => setTimeout(r, FORWARD_RESYNC_MS + 500));
      assert.deepEqual(await weftdRules(c), { ipt: 2, nft: 2 });
      assert.deepEqual(await failing(c), []);
    });

    it('--iptables-forward-rules=false removes weftd\'s accepts and pod traffic through those nodes is dropped', async () => {
      const [n1, n2, n3] = c.nodes as [ClusterNode, ClusterNode, ClusterNode];
      await restartWeftd(c, [n1, n2], ['--iptables-forward-rules=false']);
      assert.deepEqual(await weftdRules(c), { ipt: 0, nft: 0 });
      assert.match(problemsOf(await doctor(c, n1), 'forward').map((p) => p.detail).join('\n'), /^ip filter FORWARD has policy drop/);
      assert.match(problemsOf(await doctor(c, n2), 'forward').map((p) => p.detail).join('\n'), /^inet host forward has policy drop/);
      const pod = (n: ClusterNode): ClusterPod => c.pods.find((p) => p.node === n) as ClusterPod;
      for (const [a, b] of [[n3, n1], [n3, n2], [n1, n3], [n2, n3]] as const) {
        assert.equal(await pingOnce(pod(a).netns, pod(b).ip) || await pingOnce(pod(a).netns, pod(b).ip), false, `${pod(a).name} -> ${pod(b).name} must be dropped`);
      }
      // Back on: the default puts the accepts back at start.
      await restartWeftd(c, [n1, n2], []);
      assert.deepEqual(await weftdRules(c), { ipt: 2, nft: 2 });
      assert.deepEqual(await failing(c), []);
    });
  });
}

void describe('FORWARD policy drop, dual stack (vxlan): iptables and ip6tables on node 1, native inet chain on node 2', { skip: skipReason(), timeout: 240_000 }, () => {
  let c: Cluster;
  before(async () => {
    c = await Cluster.create({ backend: 'vxlan', store: 'file', nodes: 3, podsPerNode: 1, ipv6Network: 'fd00:10:244::/56', delegate: { ipMasq: false } });
    const [n1, n2] = c.nodes as [ClusterNode, ClusterNode];
    await nsRun(n1.netns, ['iptables', '-P', 'FORWARD', 'DROP']);
    await nsRun(n1.netns, ['ip6tables', '-P', 'FORWARD', 'DROP']);
    await nsRun(n2.netns, ['nft', 'add', 'table', 'inet', 'host']);
    await nsRun(n2.netns, ['nft', 'add', 'chain', 'inet', 'host', 'forward', '{ type filter hook forward priority 0; policy drop; }']);
  });
  after(() => c?.destroy());

  it('accepts for the IPv6Network too (ip6 filter FORWARD, inet chain); pods reach each other over both families', async () => {
    const [n1] = c.nodes as [ClusterNode];
    const ip6t = async (): Promise<number> => (await nsRun(n1.netns, ['ip6tables', '-S', 'FORWARD'])).split('\n').filter((l) => l.includes(`"${FORWARD_TAG}: `) && l.includes('fd00:10:244::/56')).length;
    await waitFor('accepts of both families', async () => { const r = await weftdRules(c); return r.ipt === 2 && r.nft === 4 && (await ip6t()) === 2; }, 3 * FORWARD_RESYNC_MS, 200);
    assert.deepEqual(await failing(c), []);
    const bad6: string[] = [];
    for (const a of c.pods) for (const b of c.pods) {
      if (a.node !== b.node && b.ip6 !== undefined && !(await canPing(a.netns, b.ip6))) bad6.push(`${a.name}->${b.name} (${b.ip6})`);
    }
    assert.deepEqual(bad6, []);
  });
});

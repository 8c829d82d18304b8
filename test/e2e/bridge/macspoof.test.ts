// macspoofchk end to end: the built bridge under `ip netns exec <node>`. A pod that changes its MAC
// loses its link to the other pod until it restores it; CHECK sees a missing element; DEL (with and
// without netns/prevResult) and GC remove a pod's elements; the rule count is the same with 1 and 10
// pods; without macspoofchk nothing is created in the bridge table.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { rootOnly, type TestNetns } from '../../../testkit/netns.ts';
import { bridgeConf, makeNodes, ours, reachable, runIn, tempDir, withPrev, type Run } from './harness.ts';

interface Elem {
  val: string | { concat: string[] };
  comment?: string;
}

/** `table bridge weft` in `node`: whether it exists, its rule count, and the macspoofchk sets by name. */
async function bridgeTable(node: TestNetns): Promise<{ exists: boolean; rules: number; ports: Elem[]; pairs: Elem[]; portsSet: string; pairsSet: string }> {
  const out = { exists: false, rules: 0, ports: [] as Elem[], pairs: [] as Elem[], portsSet: '', pairsSet: '' };
  const r = await node.exec(['nft', '-j', 'list', 'table', 'bridge', 'weft']);
  if (r.code !== 0) return out;
  out.exists = true;
  const doc = JSON.parse(r.stdout) as { nftables: Array<Record<string, { name?: string; elem?: Array<{ elem: Elem }> }>> };
  for (const item of doc.nftables) {
    if (item['rule'] !== undefined) out.rules++;
    const set = item['set'];
    const elems = (set?.elem ?? []).map((e) => e.elem);
    if (set?.name?.startsWith('bridge-msports-') === true) [out.ports, out.portsSet] = [elems, set.name];
    if (set?.name?.startsWith('bridge-mspairs-') === true) [out.pairs, out.pairsSet] = [elems, set.name];
  }
  return out;
}

function iface(add: Run, pod: boolean): { name: string; mac: string } {
  const ifs = (add.json?.['interfaces'] ?? []) as Array<{ name: string; mac: string; sandbox?: string }>;
  const i = pod ? ifs.find((x) => x.sandbox !== undefined) : ifs[1];
  assert.ok(i !== undefined, add.stdout);
  return i;
}

function podIp(add: Run): string {
  const ip = (add.json?.['ips'] as Array<{ address: string }> | undefined)?.[0]?.address.split('/')[0];
  assert.ok(ip !== undefined, add.stdout);
  return ip;
}

/** The pair element an ADD should have made: host veth . pod MAC, commented with the attachment. */
function pairOf(add: Run, containerId: string): Elem {
  return { val: { concat: [iface(add, false).name, iface(add, true).mac] }, comment: `${containerId}/eth0` };
}

async function add(node: TestNetns, pod: TestNetns, id: string, conf: unknown): Promise<Run> {
  const r = await runIn(node, ours(), { command: 'ADD', containerId: id, netns: pod.path }, conf);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  return r;
}

describe('bridge macspoofchk', rootOnly(), () => {
  test('without macspoofchk nothing is created in the bridge table', async () => {
    const { node, pods } = await makeNodes(1);
    const [p] = pods;
    assert.ok(p);
    const dir = tempDir('nospoof');
    try {
      const conf = bridgeConf({ dataDir: dir });
      const r = await add(node, p, 'plain', conf);
      assert.deepEqual(await bridgeTable(node), { exists: false, rules: 0, ports: [], pairs: [], portsSet: '', pairsSet: '' });
      const del = await runIn(node, ours(), { command: 'DEL', containerId: 'plain', netns: p.path }, withPrev(conf, r.json));
      assert.equal(del.code, 0, del.stdout + del.stderr);
      assert.equal((await bridgeTable(node)).exists, false);
    } finally {
      await node.destroy();
      await p.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a pod that changes its MAC is cut off until it restores it; CHECK; DEL removes the elements', async () => {
    const { node, pods } = await makeNodes(2);
    const [a, b] = pods;
    assert.ok(a && b);
    const dir = tempDir('spoof');
    try {
      const conf = bridgeConf({ dataDir: dir, extra: { macspoofchk: true } });
      const addA = await add(node, a, 'spoofa', conf);
      const addB = await add(node, b, 'spoofb', conf);
      const ipB = podIp(addB);

      const t = await bridgeTable(node);
      assert.equal(t.rules, 1);
      const hostA = iface(addA, false).name;
      const hostB = iface(addB, false).name;
      assert.deepEqual(t.ports.map((e) => e.val).sort(), [hostA, hostB].sort());
      assert.deepEqual(t.ports.find((e) => e.val === hostA)?.comment, 'spoofa/eth0');
      assert.deepEqual([...t.pairs].sort((x, y) => String(x.comment).localeCompare(String(y.comment))), [pairOf(addA, 'spoofa'), pairOf(addB, 'spoofb')]);

      const checkA = () => runIn(node, ours(), { command: 'CHECK', containerId: 'spoofa', netns: a.path }, withPrev(conf, addA.json));
      assert.equal((await checkA()).code, 0);
      assert.deepEqual(await reachable(a, [ipB]), [ipB], 'A reaches B from its own MAC');

      const setMac = async (mac: string) => assert.equal((await a.exec(['ip', 'link', 'set', 'dev', 'eth0', 'address', mac])).code, 0);
      await setMac('02:de:ad:be:ef:01');
      assert.deepEqual(await reachable(a, [ipB]), [], 'frames from another MAC are dropped at the port');
      assert.deepEqual(await reachable(b, [podIp(addA)]), [], 'B gets no answer either: replies come from the new MAC');
      await setMac(iface(addA, true).mac);
      assert.deepEqual(await reachable(a, [ipB]), [ipB], 'restoring the MAC restores connectivity');

      // The pair removed behind our back: the port is still listed, so A is cut off, and CHECK says why.
      const pairA = `${hostA} . ${iface(addA, true).mac}`;
      assert.equal((await node.exec(['nft', `delete element bridge weft ${t.pairsSet} { ${pairA} }`])).code, 0);
      assert.deepEqual(await reachable(a, [ipB]), [], 'a listed port without its pair drops everything');
      const bad = await checkA();
      assert.equal(bad.code, 1, bad.stdout);
      assert.match(String(bad.json?.['msg']), /macspoofchk element for spoofa\/eth0 in bridge-mspairs-/);

      // DEL without netns and prevResult finds A's (remaining) element by comment; B's stay.
      assert.equal((await runIn(node, ours(), { command: 'DEL', containerId: 'spoofa', netns: '' }, conf)).code, 0);
      const afterA = await bridgeTable(node);
      assert.deepEqual(afterA.ports.map((e) => e.val), [hostB]);
      assert.deepEqual(afterA.pairs, [pairOf(addB, 'spoofb')]);
      for (let i = 0; i < 2; i++) {
        const del = await runIn(node, ours(), { command: 'DEL', containerId: 'spoofb', netns: b.path }, withPrev(conf, addB.json));
        assert.equal(del.code, 0, del.stdout + del.stderr);
      }
      const empty = await bridgeTable(node);
      assert.deepEqual([empty.ports, empty.pairs, empty.rules], [[], [], 1]);
    } finally {
      await node.destroy();
      for (const p of pods) await p.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('10 pods: the rule count of 1 pod; GC frees the elements of attachments not listed', async () => {
    const { node, pods } = await makeNodes(10);
    const dir = tempDir('spoof10');
    try {
      const conf = bridgeConf({ dataDir: dir, cniVersion: '1.1.0', extra: { macspoofchk: true } });
      const adds: Run[] = [];
      for (const [i, p] of pods.entries()) {
        adds.push(await add(node, p, `pod${i}`, conf));
        if (i === 0) assert.equal((await bridgeTable(node)).rules, 1);
      }
      const t = await bridgeTable(node);
      assert.equal(t.rules, 1, 'one rule whatever the pod count');
      assert.equal(t.ports.length, 10);
      assert.equal(t.pairs.length, 10);

      const keep = [0, 1, 2, 3, 4].map((i) => ({ containerID: `pod${i}`, ifname: 'eth0' }));
      const gc = await runIn(node, ours(), { command: 'GC', containerId: '', netns: '' }, { ...conf, 'cni.dev/valid-attachments': keep });
      assert.equal(gc.code, 0, gc.stdout + gc.stderr);
      const after = await bridgeTable(node);
      const kept = adds.slice(0, 5).map((r, i) => pairOf(r, `pod${i}`));
      assert.deepEqual([...after.pairs].sort((x, y) => String(x.comment).localeCompare(String(y.comment))), kept);
      assert.deepEqual(after.ports.map((e) => e.comment).sort(), keep.map((k) => `${k.containerID}/eth0`));
      assert.equal(after.rules, 1);
    } finally {
      await node.destroy();
      for (const p of pods) await p.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

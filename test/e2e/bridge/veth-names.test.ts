// Host veth names (w<hash(network)><hash(containerID/ifname)>): ADD uses the computed name and still
// tags the alias; a stale pair under that name is replaced, a colliding live one (another attachment's
// alias) is never deleted by ADD, DEL or GC; DEL without netns finds an untagged pair by name; GC of
// one network removes its unlisted veths (tagged or not, enslaved or not) and legacy alias-tagged
// ones, and leaves other networks' veths alone.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { ipJson, rootOnly, type TestNetns } from '../../../testkit/netns.ts';
import { hostVethName, vethNetworkPrefix } from '../../../lib/attach/bridge-veth.ts';
import { bridgeConf, makeNodes, ours, runIn, tempDir, veths } from './harness.ts';

interface LinkJ { ifname: string; ifalias?: string; master?: string; linkinfo?: { info_kind?: string } }

async function link(ns: TestNetns, name: string): Promise<LinkJ | undefined> {
  const links = await ipJson<LinkJ[]>(ns, ['-d', 'link', 'show']);
  return links.find((l) => l.ifname === name);
}

/** A veth pair with both ends in `ns`, as an ADD killed right after RTM_NEWLINK (or an older build) leaves it. */
async function strayVeth(ns: TestNetns, name: string, alias?: string): Promise<void> {
  const peer = `p${name.slice(-8)}`;
  const r = await ns.exec(['ip', 'link', 'add', name, 'type', 'veth', 'peer', 'name', peer]);
  assert.equal(r.code, 0, r.stderr);
  if (alias !== undefined) assert.equal((await ns.exec(['ip', 'link', 'set', name, 'alias', alias])).code, 0);
}

describe('bridge host veth names', rootOnly(), () => {
  test('ADD names the host end by network and attachment; stale pair replaced, colliding one refused', async () => {
    const { node, pods } = await makeNodes(2);
    const [p1, p2] = pods;
    assert.ok(p1 && p2);
    const dir = tempDir('names');
    try {
      const conf = bridgeConf({ dataDir: dir });
      const name1 = hostVethName('weftnet', 'named1', 'eth0');
      // A stale, untagged, unenslaved pair of this very attachment (a killed earlier ADD).
      await strayVeth(node, name1);
      const add = await runIn(node, ours(), { command: 'ADD', containerId: 'named1', netns: p1.path }, conf);
      assert.equal(add.code, 0, add.stdout + add.stderr);
      const ifs = add.json?.['interfaces'] as Array<{ name: string }>;
      assert.equal(ifs[1]?.name, name1);
      const l = await link(node, name1);
      assert.equal(l?.ifalias, 'weft:named1/eth0');
      assert.equal(l?.master, 'cni0');
      assert.deepEqual((await veths(node)).sort(), [name1], 'the stale pair (and its node-side peer) is gone');

      // Same computed name, but tagged for another attachment: a hash collision with a live pod, kept.
      const name2 = hostVethName('weftnet', 'named2', 'eth0');
      await strayVeth(node, name2, 'weft:someone-else/eth0');
      const clash = await runIn(node, ours(), { command: 'ADD', containerId: 'named2', netns: p2.path }, conf);
      assert.notEqual(clash.code, 0, clash.stdout);
      assert.equal((await link(node, name2))?.ifalias, 'weft:someone-else/eth0');
      assert.equal((await ipJson<LinkJ[]>(p2, ['link', 'show'])).some((x) => x.ifname === 'eth0'), false, 'rolled back');
      // Nor does a DEL without netns of that attachment delete it.
      assert.equal((await runIn(node, ours(), { command: 'DEL', containerId: 'named2', netns: '' }, conf)).code, 0);
      assert.equal((await link(node, name2))?.ifalias, 'weft:someone-else/eth0');

      // DEL without CNI_NETNS and without prevResult finds an untagged pair by its name.
      const name3 = hostVethName('weftnet', 'named3', 'eth0');
      await strayVeth(node, name3);
      const del = await runIn(node, ours(), { command: 'DEL', containerId: 'named3', netns: '' }, conf);
      assert.equal(del.code, 0, del.stdout + del.stderr);
      assert.equal(await link(node, name3), undefined);
    } finally {
      await node.destroy();
      await p1.destroy();
      await p2.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('GC (1.1): unlisted veths of the network by name, legacy ones by alias; other networks kept', async () => {
    const { node, pods } = await makeNodes(1);
    const [pod] = pods;
    assert.ok(pod);
    const dir = tempDir('namesgc');
    try {
      const conf = bridgeConf({ dataDir: dir, cniVersion: '1.1.0' });
      const add = await runIn(node, ours(), { command: 'ADD', containerId: 'keep1', netns: pod.path }, conf);
      assert.equal(add.code, 0, add.stdout + add.stderr);
      const kept = hostVethName('weftnet', 'keep1', 'eth0');
      const untagged = hostVethName('weftnet', 'gone1', 'eth0');
      const tagged = hostVethName('weftnet', 'gone2', 'eth0');
      const otherNet = hostVethName('othernet', 'gone3', 'eth0');
      assert.notEqual(vethNetworkPrefix('weftnet'), vethNetworkPrefix('othernet'));
      await strayVeth(node, untagged);
      await strayVeth(node, tagged, 'weft:gone2/eth0');
      await strayVeth(node, otherNet);
      await strayVeth(node, 'veth0badc0de', 'weft:legacy/eth0');
      await strayVeth(node, 'vethforeign0');
      // Under an unlisted name but tagged for a listed attachment: a colliding live pod, kept.
      const collide = hostVethName('weftnet', 'gone4', 'eth0');
      await strayVeth(node, collide, 'weft:keep1/eth0');

      const gc = await runIn(node, ours(), { command: 'GC', containerId: '', netns: '' }, { ...conf, 'cni.dev/valid-attachments': [{ containerID: 'keep1', ifname: 'eth0' }] });
      assert.equal(gc.code, 0, gc.stdout + gc.stderr);
      const left = (await veths(node)).sort();
      assert.deepEqual(left, [kept, otherNet, collide, 'vethforeign0', `p${otherNet.slice(-8)}`, `p${collide.slice(-8)}`, 'pforeign0'].sort());
    } finally {
      await node.destroy();
      await pod.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ADD, CHECK, DEL, DEL again; DEL after the netns is gone; DEL with no CNI_NETNS and no prevResult;
// CHECK failing once an address is removed. Each leaves no veth, no address file, no set element.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { rootOnly } from '../../../testkit/netns.ts';
import { bridgeConf, makeNodes, nftState, ours, runIn, tempDir, veths, withPrev } from './harness.ts';

function leases(dir: string, net = 'weftnet'): string[] {
  try {
    return readdirSync(join(dir, net)).filter((f) => /^[0-9a-f.:]+$/.test(f) && f.includes('.'));
  } catch {
    return [];
  }
}

describe('bridge lifecycle', rootOnly(), () => {
  test('ADD, CHECK, DEL, DEL again; CHECK fails after an address is removed', async () => {
    const { node, pods } = await makeNodes(1);
    const pod = pods[0];
    assert.ok(pod);
    const dir = tempDir('life');
    try {
      const conf = bridgeConf({ dataDir: dir });
      const inv = { containerId: 'life1', netns: pod.path };
      const add = await runIn(node, ours(), { command: 'ADD', ...inv }, conf);
      assert.equal(add.code, 0, add.stdout + add.stderr);
      assert.equal((await veths(node)).length, 1);
      assert.deepEqual(leases(dir), ['10.88.0.2']);
      assert.equal((await nftState(node)).elements.length, 1);

      const chk = await runIn(node, ours(), { command: 'CHECK', ...inv }, withPrev(conf, add.json));
      assert.equal(chk.code, 0, chk.stdout + chk.stderr);

      await pod.exec(['ip', 'addr', 'del', '10.88.0.2/24', 'dev', 'eth0']);
      const bad = await runIn(node, ours(), { command: 'CHECK', ...inv }, withPrev(conf, add.json));
      assert.equal(bad.code, 1);
      assert.match(String(bad.json?.['msg']), /10\.88\.0\.2\/24 not found/);

      for (let i = 0; i < 2; i++) {
        const del = await runIn(node, ours(), { command: 'DEL', ...inv }, withPrev(conf, add.json));
        assert.equal(del.code, 0, del.stdout + del.stderr);
        assert.deepEqual(await veths(node), []);
        assert.deepEqual(leases(dir), []);
        assert.deepEqual((await nftState(node)).elements, []);
      }
    } finally {
      await node.destroy();
      await pod.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('DEL after the netns was deleted, and DEL with no CNI_NETNS and no prevResult', async () => {
    const { node, pods } = await makeNodes(2);
    const [gone, kept] = pods;
    assert.ok(gone && kept);
    const dir = tempDir('gone');
    try {
      const conf = bridgeConf({ dataDir: dir });
      assert.equal((await runIn(node, ours(), { command: 'ADD', containerId: 'gone', netns: gone.path }, conf)).code, 0);
      assert.equal((await runIn(node, ours(), { command: 'ADD', containerId: 'kept', netns: kept.path }, conf)).code, 0);
      assert.equal((await veths(node)).length, 2);
      assert.equal((await nftState(node)).elements.length, 2);

      await gone.destroy();
      const d1 = await runIn(node, ours(), { command: 'DEL', containerId: 'gone', netns: gone.path }, conf);
      assert.equal(d1.code, 0, d1.stdout + d1.stderr);
      // The netns still exists, but the runtime gives neither it nor a prevResult: found by alias and comment.
      const d2 = await runIn(node, ours(), { command: 'DEL', containerId: 'kept', netns: '' }, conf);
      assert.equal(d2.code, 0, d2.stdout + d2.stderr);
      assert.deepEqual(await veths(node), []);
      assert.deepEqual(await veths(kept), [], 'the pod end went with its host end');
      assert.deepEqual(leases(dir), []);
      assert.deepEqual((await nftState(node)).elements, []);
    } finally {
      await node.destroy();
      await kept.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

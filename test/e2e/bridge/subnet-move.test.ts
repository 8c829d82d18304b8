// The cni0 address trap, with the built bridge in a node namespace: the node's subnet changes
// (here: the host-local subnet of the config, as the flannel plugin renders it from a new
// subnet.env). While a pod holds an address in the old subnet, ADD fails naming it and changes
// nothing; once that pod is deleted, the next ADD moves the bridge to the new gateway.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { rootOnly } from '../../helpers/netns.ts';
import { addrsOf, bridgeConf, makeNodes, ours, reachable, runIn, tempDir, veths } from './harness.ts';

const OLD = '10.88.1.0/24';
const NEW = '10.88.7.0/24';

describe('bridge: the node subnet changes under cni0', rootOnly(), () => {
  test('pods left on the old subnet: ADD fails naming them; once they are gone, ADD moves cni0 to the new gateway', async () => {
    const { node, pods } = await makeNodes(3);
    const [old1, fresh, fresh2] = pods;
    assert.ok(old1 && fresh && fresh2);
    const dir = tempDir('move');
    try {
      const before = bridgeConf({ dataDir: dir, subnet: OLD });
      const after = bridgeConf({ dataDir: dir, subnet: NEW });
      const a = await runIn(node, ours(), { command: 'ADD', containerId: 'old-pod-1', netns: old1.path }, before);
      assert.equal(a.code, 0, a.stdout + a.stderr);
      assert.deepEqual(await addrsOf(node, 'cni0'), ['10.88.1.1/24']);

      // A pod still holds 10.88.1.2: refused, naming it, and nothing of this ADD is left.
      const refused = await runIn(node, ours(), { command: 'ADD', containerId: 'new-pod-1', netns: fresh.path }, after);
      assert.equal(refused.code, 1, refused.stdout);
      assert.equal(refused.json?.['code'], 110);
      assert.match(String(refused.json?.['msg']), /^bridge cni0 already has an IP address different from 10\.88\.7\.1\/24: it has 10\.88\.1\.1\/24 from the node's previous subnet, and 1 pod address\(es\) in 10\.88\.1\.1\/24 are still held/);
      assert.match(String(refused.json?.['details']), /^10\.88\.1\.2 \(container old-pod-1 eth0\)\. Delete those pods/);
      assert.deepEqual(await addrsOf(node, 'cni0'), ['10.88.1.1/24'], 'the old gateway stays while its pods do');
      assert.equal((await veths(node)).length, 1, 'the refused ADD removed its veth');
      assert.deepEqual(readdirSync(join(dir, 'weftnet')).filter((f) => f.startsWith('10.88.7.')), [], 'and released its address');

      const d = await runIn(node, ours(), { command: 'DEL', containerId: 'old-pod-1', netns: old1.path }, before);
      assert.equal(d.code, 0, d.stdout + d.stderr);

      // No pod left on 10.88.1.0/24: the next ADD replaces the address instead of failing.
      const moved = await runIn(node, ours(), { command: 'ADD', containerId: 'new-pod-1', netns: fresh.path }, after);
      assert.equal(moved.code, 0, moved.stdout + moved.stderr);
      assert.deepEqual(await addrsOf(node, 'cni0'), ['10.88.7.1/24']);
      const second = await runIn(node, ours(), { command: 'ADD', containerId: 'new-pod-2', netns: fresh2.path }, after);
      assert.equal(second.code, 0, second.stdout + second.stderr);
      const ip2 = String((second.json?.['ips'] as Array<{ address: string }>)[0]?.address.split('/')[0]);
      assert.match(ip2, /^10\.88\.7\./);
      assert.deepEqual((await reachable(fresh, ['10.88.7.1', ip2])).sort(), ['10.88.7.1', ip2].sort(), 'pods on the new subnet reach the gateway and each other');
    } finally {
      await node.destroy();
      for (const p of pods) await p.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

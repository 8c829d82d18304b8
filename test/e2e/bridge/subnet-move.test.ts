// The cni0 address trap, with the built bridge in a node namespace: the node's subnet changes
// (here: the host-local subnet of the config, as the flannel plugin renders it from a new
// subnet.env). While a pod holds an address in the old subnet, ADD fails naming it and changes
// nothing; once that pod is deleted, the next ADD moves the bridge to the new gateway.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rootOnly } from '../../../testkit/netns.ts';
import { addrsOf, bridgeConf, makeNodes, ours, reachable, ROOT, runIn, tempDir, veths, type Impl } from './harness.ts';

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

  test('through the flannel plugin: a new FLANNEL_SUBNET in subnet.env is refused while the old pod lives, applied after its DEL', async (t) => {
    const bin = join(ROOT, 'dist', 'bin');
    if (!existsSync(join(bin, 'flannel'))) return t.skip('dist/bin/flannel is missing: npm run build');
    const flannel: Impl = { label: 'weft', argv: [join(bin, 'flannel')], cniPath: bin };
    const { node, pods } = await makeNodes(2);
    const [oldPod, newPod] = pods;
    assert.ok(oldPod && newPod);
    const dir = tempDir('move-flannel');
    const subnetFile = join(dir, 'subnet.env');
    const lease = (subnet: string): void => writeFileSync(subnetFile, `FLANNEL_NETWORK=10.89.0.0/16\nFLANNEL_SUBNET=${subnet}\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=false\n`);
    const conf = { cniVersion: '1.0.0', name: 'weftnet', type: 'flannel', subnetFile, dataDir: join(dir, 'flannel'), ipam: { dataDir: join(dir, 'ipam') } };
    try {
      lease('10.89.1.1/24');
      const a = await runIn(node, flannel, { command: 'ADD', containerId: 'old-pod', netns: oldPod.path }, conf);
      assert.equal(a.code, 0, a.stdout + a.stderr);
      assert.deepEqual(await addrsOf(node, 'cni0'), ['10.89.1.1/24']);

      lease('10.89.5.1/24'); // weftd leased another subnet
      const refused = await runIn(node, flannel, { command: 'ADD', containerId: 'new-pod', netns: newPod.path }, conf);
      assert.equal(refused.code, 1, refused.stdout);
      assert.match(String(refused.json?.['msg']), /already has an IP address different from 10\.89\.5\.1\/24: it has 10\.89\.1\.1\/24/);
      assert.match(String(refused.json?.['details']), /^10\.89\.1\.2 \(container old-pod eth0\)/);
      assert.deepEqual(await addrsOf(node, 'cni0'), ['10.89.1.1/24']);

      const d = await runIn(node, flannel, { command: 'DEL', containerId: 'old-pod', netns: oldPod.path }, conf);
      assert.equal(d.code, 0, d.stdout + d.stderr);
      const moved = await runIn(node, flannel, { command: 'ADD', containerId: 'new-pod', netns: newPod.path }, conf);
      assert.equal(moved.code, 0, moved.stdout + moved.stderr);
      assert.deepEqual(await addrsOf(node, 'cni0'), ['10.89.5.1/24']);
      assert.deepEqual(await reachable(newPod, ['10.89.5.1']), ['10.89.5.1']);
    } finally {
      await node.destroy();
      for (const p of pods) await p.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

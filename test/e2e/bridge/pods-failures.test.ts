// Ten pods on one bridge reach each other and the gateway with a constant rule count; injected
// failures (range exhausted, bridge name taken by a non-bridge, invalid MTU) give a clear error and
// leave nothing behind.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { rootOnly } from '../../../testkit/netns.ts';
import { bridgeConf, makeNodes, nftState, ours, reachable, runIn, tempDir, veths } from './harness.ts';

function leases(dir: string, net = 'weftnet'): string[] {
  try {
    return readdirSync(join(dir, net)).filter((f) => /^\d+\.\d+\.\d+\.\d+$/.test(f));
  } catch {
    return [];
  }
}

describe('bridge with many pods, and failure injection', rootOnly(), () => {
  test('ten pods reach each other and the gateway; as many rules with ten pods as with one', async () => {
    const { node, pods } = await makeNodes(10);
    const dir = tempDir('ten');
    try {
      const conf = bridgeConf({ dataDir: dir });
      const ips: string[] = [];
      let rulesWithOne = -1;
      for (const [i, pod] of pods.entries()) {
        const r = await runIn(node, ours(), { command: 'ADD', containerId: `pod${i}`, netns: pod.path }, conf);
        assert.equal(r.code, 0, r.stdout + r.stderr);
        ips.push(String((r.json?.['ips'] as Array<{ address: string }>)[0]?.address.split('/')[0]));
        if (i === 0) rulesWithOne = (await nftState(node)).rules;
      }
      const st = await nftState(node);
      assert.equal(st.elements.length, 10);
      assert.equal(st.rules, rulesWithOne, 'rule count does not grow with pods');
      for (const [i, pod] of pods.entries()) {
        const want = ['10.88.0.1', ...ips.filter((_, j) => j !== i)];
        assert.deepEqual((await reachable(pod, want)).sort(), want.sort(), `pod${i} reaches everyone`);
      }
    } finally {
      await node.destroy();
      for (const p of pods) await p.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('range exhausted, bridge name taken, invalid MTU: clear errors, nothing left behind', async () => {
    const { node, pods } = await makeNodes(2);
    const [p1, p2] = pods;
    assert.ok(p1 && p2);
    const dir = tempDir('fail');
    try {
      // A /30 has exactly one usable address after the gateway.
      const tiny = bridgeConf({ dataDir: dir, subnet: '10.99.0.0/30' });
      assert.equal((await runIn(node, ours(), { command: 'ADD', containerId: 'a', netns: p1.path }, tiny)).code, 0);
      const ex = await runIn(node, ours(), { command: 'ADD', containerId: 'b', netns: p2.path }, tiny);
      assert.equal(ex.code, 1);
      assert.match(String(ex.json?.['msg']), /no IP addresses available|exhaust/i, ex.stdout);
      assert.equal((await veths(node)).length, 1, 'the failed ADD removed its veth');
      assert.deepEqual(await veths(p2), []);
      assert.deepEqual(leases(dir), ['10.99.0.2']);
      assert.equal((await nftState(node)).elements.length, 1);

      // A veth pair (dummy may be unavailable): any non-bridge link will do.
      const mk = await node.exec(['ip', 'link', 'add', 'taken0', 'type', 'veth', 'peer', 'name', 'taken1']);
      assert.equal(mk.code, 0, mk.stderr);
      const taken = await runIn(node, ours(), { command: 'ADD', containerId: 'c', netns: p2.path }, bridgeConf({ dataDir: dir, extra: { bridge: 'taken0' } }));
      assert.equal(taken.code, 1);
      assert.match(String(taken.json?.['msg']), /already exists but is not a bridge/);

      const mtu = await runIn(node, ours(), { command: 'ADD', containerId: 'd', netns: p2.path }, bridgeConf({ dataDir: dir, extra: { bridge: 'br-mtu', mtu: -1 } }));
      assert.equal(mtu.code, 1);
      assert.equal(mtu.json?.['code'], 7);
      assert.match(String(mtu.json?.['msg']), /mtu/);
      const links = await node.exec(['ip', '-o', 'link', 'show']);
      assert.doesNotMatch(links.stdout, /br-mtu/, 'invalid config touched nothing');
      assert.equal((await veths(node)).filter((v) => !v.startsWith('taken')).length, 1);
      assert.deepEqual(await veths(p2), []);
      assert.deepEqual(leases(dir), ['10.99.0.2']);
    } finally {
      await node.destroy();
      for (const p of pods) await p.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

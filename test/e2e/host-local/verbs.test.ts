// host-local verbs beyond ADD: names that could escape the data dir (refused, except by DEL, which then
// frees nothing and creates nothing), CHECK, GC (1.1) and STATUS (1.1).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addresses, netConf, ourBin, pool, removeDir, run, snapshot, tempDataDir } from './harness.ts';

const ours = ourBin();

describe('host-local refuses names that could escape the data dir', () => {
  const root = tempDataDir('names');
  const dataDir = join(root, 'data');
  after(() => removeDir(root));
  const ipam = { ranges: [[{ subnet: '10.40.0.0/24' }]] };

  const badNetworks = ['../escape', 'a/b', '..', '.', '/abs', 'nul\u0000x', 'x'.repeat(256), ''];
  for (const name of badNetworks) {
    void test(`network name ${JSON.stringify(name.slice(0, 20))}${name.length > 20 ? '...' : ''}`, async () => {
      for (const command of ['ADD', 'DEL', 'CHECK'] as const) {
        const r = await run(ours, { command, containerId: 'c1' }, netConf(name, dataDir, ipam));
        // DEL never blocks cleanup: no store can exist under such a name, so there is nothing to free.
        if (command === 'DEL') {
          assert.equal(r.code, 0, `DEL: ${r.stdout}`);
          continue;
        }
        assert.equal(r.code, 1, `${command}: ${r.stdout}`);
        assert.ok([4, 7].includes(Number(r.json?.['code'])), `${command}: code ${String(r.json?.['code'])}`);
      }
      assert.deepEqual(readdirSync(root), [], 'nothing created anywhere under the temp root');
    });
  }

  const badIds = ['../../x', 'a/b', '.hidden', '-x', 'x'.repeat(1025), 'a b', 'a\tb'];
  for (const id of badIds) {
    void test(`container ID ${JSON.stringify(id.slice(0, 20))}`, async () => {
      for (const command of ['ADD', 'DEL'] as const) {
        const r = await run(ours, { command, containerId: id }, netConf('good', dataDir, ipam));
        assert.equal(r.code, 1, `${command}: ${r.stdout}`);
        assert.equal(r.json?.['code'], 4, r.stdout);
      }
      assert.deepEqual(readdirSync(root), []);
    });
  }

  void test('interface names "..", "a/b" and over 15 bytes are refused', async () => {
    for (const ifname of ['..', 'a/b', 'eth0123456789abc']) {
      const r = await run(ours, { command: 'ADD', containerId: 'c1', ifname }, netConf('good', dataDir, ipam));
      assert.equal(r.json?.['code'], 4, r.stdout);
    }
    assert.deepEqual(readdirSync(root), []);
  });
});

describe('host-local CHECK, GC and STATUS', () => {
  const dataDir = tempDataDir('verbs');
  after(() => removeDir(dataDir));
  const ipam = { ranges: [[{ subnet: '10.41.0.0/24' }], [{ subnet: 'fd00:41::/64' }]] };
  const conf = (extra: Record<string, unknown> = {}) => netConf('verbs', dataDir, ipam, extra, '1.1.0');

  void test('CHECK passes for a held attachment and fails (code 3) otherwise', async () => {
    const a = await run(ours, { command: 'ADD', containerId: 'chk' }, conf());
    assert.equal(a.code, 0, a.stdout);
    const prevResult = { cniVersion: '1.1.0', ips: addresses(a).map((address) => ({ address })) };
    assert.equal((await run(ours, { command: 'CHECK', containerId: 'chk' }, conf({ prevResult }))).code, 0);
    const other = await run(ours, { command: 'CHECK', containerId: 'nobody' }, conf());
    assert.equal(other.json?.['code'], 3, other.stdout);
    const wrongIf = await run(ours, { command: 'CHECK', containerId: 'chk', ifname: 'net1' }, conf());
    assert.equal(wrongIf.json?.['code'], 3, wrongIf.stdout);
    const forged = { cniVersion: '1.1.0', ips: [{ address: '10.41.0.200/24' }] };
    const bad = await run(ours, { command: 'CHECK', containerId: 'chk' }, conf({ prevResult: forged }));
    assert.equal(bad.json?.['code'], 3, bad.stdout);
    assert.equal((await run(ours, { command: 'DEL', containerId: 'chk' }, conf())).code, 0);
  });

  void test('GC with 5 valid attachments out of 20 leaves exactly those 5', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `gc-${i}`);
    const adds = await pool(4, ids.map((id) => () => run(ours, { command: 'ADD', containerId: id }, conf())));
    adds.forEach((r) => assert.equal(r.code, 0, r.stdout));
    const keep = [1, 4, 9, 13, 19].map((i) => `gc-${i}`);
    const valid = keep.map((containerID) => ({ containerID, ifname: 'eth0' }));
    // An attachment that is valid for another interface must not save eth0's addresses.
    valid.push({ containerID: 'gc-2', ifname: 'net1' });
    const gc = await run(ours, { command: 'GC' }, conf({ 'cni.dev/valid-attachments': valid }));
    assert.equal(gc.code, 0, gc.stdout);
    const snap = snapshot(dataDir, 'verbs');
    const holders = Object.entries(snap).filter(([n]) => n !== 'lock' && !n.startsWith('last_reserved_ip.'));
    assert.equal(holders.length, 10, 'two addresses (v4 + v6) for each of the 5');
    assert.deepEqual([...new Set(holders.map(([, c]) => c.split('\r\n')[0]))].sort(), [...keep].sort());
    const kept = adds.filter((_, i) => keep.includes(`gc-${i}`)).flatMap((r) => addresses(r).map((a) => a.split('/')[0]));
    assert.deepEqual(holders.map(([n]) => n).sort(), [...kept].sort());
    // Without the key, GC refuses rather than freeing everything.
    const noKey = await run(ours, { command: 'GC' }, conf());
    assert.equal(noKey.json?.['code'], 7, noKey.stdout);
    assert.equal(Object.keys(snapshot(dataDir, 'verbs')).length, Object.keys(snap).length);
  });

  void test('STATUS: ready on a usable dir, 50 when unusable or full', async () => {
    assert.equal((await run(ours, { command: 'STATUS' }, conf())).code, 0);
    const fresh = join(dataDir, 'not-yet');
    const r0 = await run(ours, { command: 'STATUS' }, netConf('n2', fresh, ipam, {}, '1.1.0'));
    assert.equal(r0.code, 0, r0.stdout);
    assert.ok(!existsSync(fresh), 'STATUS creates nothing');
    const file = join(dataDir, 'a-file');
    writeFileSync(file, '');
    const r1 = await run(ours, { command: 'STATUS' }, netConf('n3', file, ipam, {}, '1.1.0'));
    assert.equal(r1.json?.['code'], 50, r1.stdout);
    const ro = join(dataDir, 'readonly');
    mkdirSync(join(ro, 'n4'), { recursive: true });
    chmodSync(join(ro, 'n4'), 0o555);
    // root bypasses mode bits; only assert when running unprivileged.
    if (process.getuid?.() !== 0) {
      const r2 = await run(ours, { command: 'STATUS' }, netConf('n4', ro, ipam, {}, '1.1.0'));
      assert.equal(r2.json?.['code'], 50, r2.stdout);
    }
    const tiny = netConf('tiny', dataDir, { ranges: [[{ subnet: '10.42.0.0/30' }]] }, {}, '1.1.0');
    assert.equal((await run(ours, { command: 'ADD', containerId: 't1' }, tiny)).code, 0);
    const full = await run(ours, { command: 'STATUS' }, tiny);
    assert.equal(full.json?.['code'], 50, full.stdout);
    assert.match(String(full.json?.['details']), /range set 0/);
  });
});

// Concurrency: our binary and the reference sharing one data dir (same flock), and exhaustion of a /24
// under 32 concurrent ADDs. Asserts distinct addresses and well-formed files, not just exit codes.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { addresses, netConf, ourBin, pool, referenceBin, removeDir, run, snapshot, tempDataDir } from './harness.ts';

const HOLDER_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]*\r\neth0$/;
const IP_FILE_RE = /^(\d+\.){3}\d+$|:/;

/** Every file is lock, last_reserved_ip.N or an address file holding "<id>\r\neth0". */
function assertWellFormed(snap: Record<string, string>): string[] {
  const ipFiles: string[] = [];
  for (const [name, content] of Object.entries(snap)) {
    if (name === 'lock') continue;
    if (name.startsWith('last_reserved_ip.')) {
      assert.match(content, IP_FILE_RE, `${name} holds an address`);
      continue;
    }
    assert.match(name, IP_FILE_RE, `unexpected file ${name}`);
    assert.match(content, HOLDER_RE, `${name} content ${JSON.stringify(content)}`);
    ipFiles.push(name);
  }
  return ipFiles;
}

const hasRef = existsSync(referenceBin.cmd);

describe('host-local under concurrency', () => {
  const dir = tempDataDir('conc');
  after(() => removeDir(dir));
  const ours = ourBin();

  void test('ours and the reference alternating on one data dir: 60 ADDs, 12 at a time', { skip: !hasRef && 'reference not installed' }, async () => {
    const conf = netConf('mixed', dir, { ranges: [[{ subnet: '10.20.0.0/24' }]] });
    const bins = Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? ours : referenceBin));
    const results = await pool(12, bins.map((bin, i) => () => run(bin, { command: 'ADD', containerId: `mix-${i}` }, conf)));
    results.forEach((r, i) => assert.equal(r.code, 0, `ADD ${i} by ${bins[i]?.label}: ${r.stdout}`));
    const got = results.map((r) => addresses(r)[0]);
    assert.equal(new Set(got).size, 60, 'distinct addresses');
    const files = assertWellFormed(snapshot(dir, 'mixed'));
    assert.equal(files.length, 60);
    // Each binary releases what the other allocated.
    const dels = await pool(12, bins.map((_, i) => () => run(i % 2 === 0 ? referenceBin : ours, { command: 'DEL', containerId: `mix-${i}` }, conf)));
    dels.forEach((r, i) => assert.equal(r.code, 0, `DEL ${i}: ${r.stdout}`));
    assert.deepEqual(assertWellFormed(snapshot(dir, 'mixed')), [], 'every address released');
  });

  void test('256 ADDs, 32 at a time, on a /24: 253 addresses and 3 clean exhaustion errors', async () => {
    const conf = netConf('full', dir, { ranges: [[{ subnet: '10.21.0.0/24' }]] });
    const results = await pool(32, Array.from({ length: 256 }, (_, i) => () => run(ours, { command: 'ADD', containerId: `full-${i}` }, conf)));
    const ok = results.filter((r) => r.code === 0);
    const failed = results.filter((r) => r.code !== 0);
    for (const r of ok) assert.equal(addresses(r).length, 1, `a successful ADD printed ${JSON.stringify(r.stdout)} (stderr ${JSON.stringify(r.stderr)})`);
    assert.equal(ok.length, 253, 'successful ADDs');
    assert.equal(new Set(ok.map((r) => addresses(r)[0])).size, 253, 'distinct addresses');
    assert.equal(failed.length, 3);
    for (const f of failed) {
      assert.equal(f.code, 1);
      assert.equal(f.json?.['code'], 110, f.stdout);
      assert.match(String(f.json?.['msg']), /no IP addresses available in range set 0: 10\.21\.0\.1-10\.21\.0\.254/);
    }
    const files = assertWellFormed(snapshot(dir, 'full'));
    assert.equal(files.length, 253);
    assert.ok(!files.includes('10.21.0.1') && !files.includes('10.21.0.0') && !files.includes('10.21.0.255'));
  });

  void test('two network names on one range, 40 ADDs each interleaved, 12 at a time: 80 distinct addresses, no lock wait in a circle', async () => {
    const two = tempDataDir('two-names');
    try {
      const ipam = { ranges: [[{ subnet: '10.22.0.0/25' }]] };
      const confs = [netConf('cbr0', two, ipam), netConf('weft', two, ipam)];
      const results = await pool(12, Array.from({ length: 80 }, (_, i) => () => run(ours, { command: 'ADD', containerId: `two-${i}` }, confs[i % 2])));
      results.forEach((r, i) => assert.equal(r.code, 0, `ADD ${i} (${i % 2 === 0 ? 'cbr0' : 'weft'}): ${r.stdout}`));
      const got = results.map((r) => addresses(r)[0]);
      assert.equal(new Set(got).size, 80, `distinct across the two names: ${got.join(' ')}`);
      assert.equal(assertWellFormed(snapshot(two, 'cbr0')).length + assertWellFormed(snapshot(two, 'weft')).length, 80);
    } finally {
      removeDir(two);
    }
  });
});

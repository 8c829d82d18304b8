// host-local's on-disk contract: the writer (ipam/host-local's DiskStore) and every reader (the
// lib listing, bridge's subnet move, weft doctor) see the same reservations. No root: temp dirs,
// flock faked.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { readAllocations } from '../../../../cli/doctor/allocations.ts';
import { allocate } from '../../../../ipam/host-local/allocator.ts';
import { DiskStore } from '../../../../ipam/host-local/disk-store.ts';
import { formatHolder, parseHolder, reservationKey } from '../../../../lib/attach/host-local-files.ts';
import { holdsAddress, listAllHeld, listHeld, listHeldNames, listNetworks, networksHoldingIn } from '../../../../lib/attach/host-local-list.ts';
import { parseCidr } from '../../../../lib/ip/index.ts';
import { hostLocalHolders } from '../../../../plugins/bridge/subnet-move.ts';
import { range } from '../../ipam/host-local/helpers.ts';

const root = mkdtempSync(join(tmpdir(), 'weft-unit-attach-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = (): string => join(root, `d${n++}`);
const noFlock = (): boolean => true;

/** Reserves one address per attachment through the real writer, with its holder index kept (threshold 0). */
function write(dataDir: string, network: string, subnet: string, attachments: Array<[string, string]>): void {
  const store = new DiskStore(dataDir, network, noFlock, undefined, 0);
  try {
    for (const [containerId, ifname] of attachments) allocate(store, [[range(subnet)]], { containerId, ifname }, []);
  } finally {
    store.close();
  }
}

describe('holder file format', () => {
  test('formatHolder output parses back to the same holder; legacy and empty forms', () => {
    for (const [id, ifname] of [['c1', 'eth0'], ['a'.repeat(300), 'net1'], ['c 2', 'eth 0']] as const) {
      assert.deepEqual(parseHolder(formatHolder(id, ifname)), { containerId: id.trim(), ifname });
    }
    assert.deepEqual(parseHolder('  c1 \n'), { containerId: 'c1', ifname: null }, 'ID only: a pre-0.7 reference file');
    assert.equal(parseHolder(' \r\n'), null, 'empty: a writer killed before write()');
  });
  test('reservation names: addresses only, IPv6 in Go form', () => {
    assert.equal(reservationKey('10.1.2.3'), '10.1.2.3');
    assert.equal(reservationKey('fd00:0:0:0::5'), 'fd00::5');
    for (const name of ['lock', 'last_reserved_ip.0', '.weft-tmp-1-abc', '10.1.2', 'notes.txt']) assert.equal(reservationKey(name), null, name);
  });
});

describe('the writer and its readers agree', () => {
  test('what DiskStore reserves is what listHeld, bridge and doctor read, in every network', () => {
    const dataDir = fresh();
    write(dataDir, 'weft', '10.244.1.0/24', [['c1', 'eth0'], ['c2', 'eth0'], ['c1', 'net1']]);
    write(dataDir, 'other', 'fd00:1::/64', [['c3', 'eth0']]);
    // The writer's own view, under its lock.
    const store = new DiskStore(dataDir, 'weft', noFlock);
    const written = store.withLock(() => store.list()).map((a) => `${a.containerId}/${a.ifname}`).sort();
    store.close();
    const held = listHeld(dataDir, 'weft');
    assert.deepEqual(held.map((h) => `${h.containerId}/${h.ifname}`).sort(), written);
    assert.deepEqual(held.map((h) => h.ip), ['10.244.1.2', '10.244.1.3', '10.244.1.4']);
    assert.deepEqual(held.map((h) => h.path), held.map((h) => join(dataDir, 'weft', h.ip)));
    // Beside the networks lives the holder index (a directory of ours): not a network.
    assert.ok(readdirSync(dataDir).includes('.weft-index'));
    assert.deepEqual(listNetworks(dataDir), ['other', 'weft']);
    const all = listAllHeld(dataDir);
    assert.deepEqual(all.map((h) => `${h.network} ${h.ip} ${h.containerId}/${h.ifname}`), [
      'other fd00:1::2 c3/eth0', 'weft 10.244.1.2 c1/eth0', 'weft 10.244.1.3 c2/eth0', 'weft 10.244.1.4 c1/net1',
    ]);
    assert.deepEqual(readAllocations(dataDir).map((a) => `${a.network} ${a.ip} ${a.containerId}/${a.ifName} ${a.path}`),
      all.map((h) => `${h.network} ${h.ip} ${h.containerId}/${h.ifname} ${h.path}`), 'doctor reads what the plugin wrote');
    const old = parseCidr('10.244.1.0/24');
    assert.ok(old);
    assert.deepEqual(hostLocalHolders(dataDir, old, 'c2').map((h) => `${h.what} ${h.containerId}/${h.ifName}`),
      ['10.244.1.2 c1/eth0', '10.244.1.4 c1/net1'], 'bridge sees the same holders (its own container skipped)');
  });

  test('legacy, empty, foreign and hand-spelled files are read as the writer reads them', () => {
    const dataDir = fresh();
    const dir = join(dataDir, 'net');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, '10.1.0.5'), 'legacy-id');
    writeFileSync(join(dir, '10.1.0.6'), '');
    writeFileSync(join(dir, 'fd00:0::7'), 'c7\r\neth0');
    writeFileSync(join(dir, 'README'), 'not an address');
    mkdirSync(join(dir, '10.1.0.8'));
    const readers = listHeld(dataDir, 'net').map((h) => `${h.ip} ${h.containerId}/${String(h.ifname)}`);
    assert.deepEqual(readers, ['10.1.0.5 legacy-id/null', 'fd00::7 c7/eth0']);
    const store = new DiskStore(dataDir, 'net', noFlock);
    const writer = store.withLock(() => store.list()).map((a) => `${a.containerId}/${String(a.ifname)}`).sort();
    store.close();
    assert.deepEqual(writer, ['c7/eth0', 'legacy-id/null']);
    assert.deepEqual(readAllocations(dataDir).map((a) => `${a.containerId}/${a.ifName}`), ['legacy-id/', 'c7/eth0']);
  });

  test('an absent dataDir or network holds nothing', () => {
    assert.deepEqual(listAllHeld(join(root, 'absent')), []);
    assert.deepEqual(listHeld(root, 'absent'), []);
  });

  test('networksHoldingIn: the networks allocating from one subnet (doctor), by file name as the writer refuses them', () => {
    const dataDir = fresh();
    write(dataDir, 'cbr0', '10.244.1.0/24', [['f1', 'eth0'], ['f2', 'eth0']]);
    write(dataDir, 'weft', '10.244.1.0/24', [['w1', 'eth0']]);
    write(dataDir, 'other', '10.245.0.0/24', [['o1', 'eth0']]);
    writeFileSync(join(dataDir, 'cbr0', '10.244.1.9'), ''); // a reference writer killed mid-write: still held
    assert.deepEqual(listHeldNames(dataDir, 'cbr0'), ['10.244.1.2', '10.244.1.3', '10.244.1.9']);
    assert.deepEqual(['10.244.1.2', '10.244.1.9', '10.244.1.4'].map((a) => holdsAddress(dataDir, 'cbr0', a)), [true, true, false]);
    assert.equal(holdsAddress(dataDir, 'absent', '10.244.1.2'), false);
    assert.deepEqual(networksHoldingIn(dataDir, '10.244.1.0/24'), [
      { network: 'cbr0', ips: ['10.244.1.2', '10.244.1.3', '10.244.1.9'] },
      { network: 'weft', ips: ['10.244.1.4'] },
    ]);
    assert.deepEqual(networksHoldingIn(dataDir, '10.245.0.0/16'), [{ network: 'other', ips: ['10.245.0.2'] }]);
    assert.deepEqual(networksHoldingIn(join(root, 'absent'), '10.0.0.0/8'), []);
    assert.throws(() => networksHoldingIn(dataDir, 'nope'), /not a CIDR/);
  });
});

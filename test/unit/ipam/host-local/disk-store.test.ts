// Unit tests for the disk store (reference layout, crash-safe writes) and its holder index. No root:
// flock is faked (the real one is exercised by the e2e tests); everything lives in a temp dir.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatIp } from '../../../../lib/ip/index.ts';
import { allocate, releaseAttachment } from '../../../../ipam/host-local/allocator.ts';
import { HostLocalCode } from '../../../../ipam/host-local/errors.ts';
import { DiskStore } from '../../../../ipam/host-local/disk-store.ts';
import { indexPath, loadIndex } from '../../../../ipam/host-local/holder-index.ts';
import type { RangeSet } from '../../../../ipam/host-local/range.ts';
import { CniError } from '../../../../lib/cni/errors.ts';
import { ip, range } from './helpers.ts';

const root = mkdtempSync(join(tmpdir(), 'weft-unit-disk-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const flocks: string[] = [];
const fakeFlock = (_fd: number, op: 'sh' | 'ex' | 'un'): boolean => {
  flocks.push(op);
  return true;
};
// indexThreshold 0: the holder index is kept however few reservations there are (the default keeps
// one only from INDEX_THRESHOLD on; see the threshold test).
function fresh(indexThreshold = 0): { store: DiskStore; dir: string; dataDir: string } {
  const dataDir = join(root, `d${n++}`);
  const store = new DiskStore(dataDir, 'net', fakeFlock, undefined, indexThreshold);
  return { store, dir: join(dataDir, 'net'), dataDir };
}
const set: RangeSet = [range('10.1.2.0/24')];
const at = (containerId: string, ifname = 'eth0') => ({ containerId, ifname });

void test('reference layout: <ip> holds "<id>\\r\\n<ifname>", last_reserved_ip.0, lock; no scratch files', () => {
  const { store, dir } = fresh();
  allocate(store, [set], at('c1'), []);
  assert.deepEqual(readdirSync(dir).sort(), ['10.1.2.2', 'last_reserved_ip.0', 'lock']);
  assert.equal(readFileSync(join(dir, '10.1.2.2'), 'latin1'), 'c1\r\neth0');
  assert.equal(readFileSync(join(dir, 'last_reserved_ip.0'), 'latin1'), '10.1.2.2');
  assert.equal(statSync(join(dir, 'lock')).mode & 0o777, 0o750 & ~process.umask());
  assert.deepEqual(flocks.slice(-2), ['ex', 'un']);
  store.close();
});

void test('IPv6 file names are printed like Go', () => {
  const { store, dir } = fresh();
  allocate(store, [[range('fd00:0:0:0:1::/120')]], at('c1'), [ip('fd00:0000:0:0:1:0:0:7')]);
  assert.ok(readdirSync(dir).includes('fd00::1:0:0:7'), readdirSync(dir).join(' '));
  store.close();
});

void test('files written by someone else (the reference) are seen, index or not', () => {
  const { store, dir, dataDir } = fresh();
  allocate(store, [set], at('c1'), []);
  assert.ok(loadIndex(dataDir, 'net', dir), 'index valid after our own ADD');
  writeFileSync(join(dir, '10.1.2.3'), 'ref\r\neth0'); // a reference ADD
  assert.equal(loadIndex(dataDir, 'net', dir), null, 'a foreign change invalidates the index');
  assert.deepEqual(allocate(store, [set], at('c2'), []).map((a) => formatIp(a.ip)), ['10.1.2.4']);
  // The reference re-ADDs the same name for another holder: must not be served from the index.
  unlinkSync(join(dir, '10.1.2.2'));
  writeFileSync(join(dir, '10.1.2.2'), 'dup\r\neth0');
  assert.throws(
    () => allocate(store, [set], at('dup'), []),
    (e: unknown) => e instanceof CniError && e.code === HostLocalCode.duplicateAllocation,
  );
  assert.deepEqual(releaseAttachment(store, at('c1')).length, 0, 'c1 no longer holds .2');
  assert.deepEqual(releaseAttachment(store, at('dup')).map((a) => formatIp(a.ip)), ['10.1.2.2']);
  store.close();
});

void test('the index is kept only from the threshold on, and dropped when the network shrinks below it', () => {
  const { store, dir, dataDir } = fresh(3);
  const big: RangeSet = [range('10.1.2.0/24')];
  allocate(store, [big], at('c1'), []);
  allocate(store, [big], at('c2'), []);
  assert.ok(!existsSync(indexPath(dataDir, 'net')), 'two reservations: no index');
  allocate(store, [big], at('c3'), []);
  assert.ok(loadIndex(dataDir, 'net', dir), 'three reservations: a valid index');
  // Served from the index: a reservation changed behind its back without moving the mtime would be
  // missed, so change one and prove a foreign change is still seen (the mtime moved).
  writeFileSync(join(dir, '10.1.2.9'), 'ref\r\neth0');
  assert.deepEqual(releaseAttachment(store, at('ref')).map((a) => formatIp(a.ip)), ['10.1.2.9']);
  assert.ok(loadIndex(dataDir, 'net', dir), 'rewritten after the release');
  releaseAttachment(store, at('c3'));
  assert.ok(!existsSync(indexPath(dataDir, 'net')), 'below the threshold again: index removed');
  assert.deepEqual(releaseAttachment(store, at('c1')).map((a) => formatIp(a.ip)), ['10.1.2.2']);
  store.close();
});

void test('the lock file and directory are created when missing, reused when there', () => {
  const { store, dir } = fresh();
  store.close();
  assert.deepEqual(readdirSync(dir), ['lock']);
  const again = new DiskStore(join(dir, '..'), 'net', fakeFlock);
  assert.deepEqual(allocate(again, [set], at('c1'), []).map((a) => formatIp(a.ip)), ['10.1.2.2']);
  again.close();
});

void test('a corrupt or foreign index is ignored', () => {
  const { store, dir, dataDir } = fresh();
  allocate(store, [set], at('c1'), []);
  writeFileSync(indexPath(dataDir, 'net'), '{not json');
  assert.equal(loadIndex(dataDir, 'net', dir), null);
  assert.equal(releaseAttachment(store, at('c1')).length, 1);
  assert.ok(loadIndex(dataDir, 'net', dir), 'rewritten after the next locked section');
  store.close();
});

void test('stale scratch files and empty reservations are cleaned under the lock', () => {
  const { store, dir } = fresh();
  writeFileSync(join(dir, '.weft-tmp-99999-dead'), 'x\r\neth0');
  writeFileSync(join(dir, '10.1.2.2'), ''); // a reference killed between open(O_EXCL) and write()
  assert.deepEqual(allocate(store, [set], at('c1'), []).map((a) => formatIp(a.ip)), ['10.1.2.2']);
  assert.deepEqual(readdirSync(dir).sort(), ['10.1.2.2', 'last_reserved_ip.0', 'lock']);
  store.close();
});

void test('reserve refuses an existing name even if the listing missed it (link EEXIST)', () => {
  const { store, dir } = fresh();
  const got = store.withLock(() => {
    store.list(); // listing taken now
    writeFileSync(join(dir, '10.1.2.9'), 'late\r\neth0'); // appears afterwards
    return store.reserve('c1', 'eth0', ip('10.1.2.9'), 0);
  });
  assert.equal(got, false);
  assert.equal(readFileSync(join(dir, '10.1.2.9'), 'latin1'), 'late\r\neth0');
  assert.ok(!existsSync(join(dir, 'last_reserved_ip.0')));
  store.close();
});

void test('path components are refused before anything is created', () => {
  for (const bad of ['..', '.', 'a/b', '', 'x\0y', 'x'.repeat(256)]) {
    const dataDir = join(root, `bad${n++}`);
    assert.throws(() => new DiskStore(dataDir, bad, fakeFlock), /single path component/);
    assert.ok(!existsSync(dataDir));
  }
});

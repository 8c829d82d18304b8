// Unit tests for ipam/host-local/allocator.ts on the memory store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatIp } from '../../../../lib/ip/index.ts';
import { CniError } from '../../../../lib/cni/errors.ts';
import { allocate, collectGarbage, findAttachment, releaseAttachment } from '../../../../ipam/host-local/allocator.ts';
import { HostLocalCode } from '../../../../ipam/host-local/errors.ts';
import { MemoryStore } from '../../../../ipam/host-local/memory-store.ts';
import type { RangeSet } from '../../../../ipam/host-local/range.ts';
import { ip, range } from './helpers.ts';

const at = (containerId: string, ifname = 'eth0') => ({ containerId, ifname });
const texts = (xs: ReadonlyArray<{ ip: Parameters<typeof formatIp>[0] }>) => xs.map((x) => formatIp(x.ip));

function codeOf(fn: () => unknown): number {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof CniError, `not a CniError: ${String(e)}`);
    return e.code;
  }
  assert.fail('did not throw');
}

const v4: RangeSet = [range('10.1.2.0/29')]; // .1 gateway, .2-.6 allocatable

void test('round-robin: successive ADDs take successive addresses, DEL does not rewind', () => {
  const s = new MemoryStore();
  assert.deepEqual(texts(allocate(s, [v4], at('a'), [])), ['10.1.2.2']);
  assert.deepEqual(texts(allocate(s, [v4], at('b'), [])), ['10.1.2.3']);
  releaseAttachment(s, at('a'));
  assert.deepEqual(texts(allocate(s, [v4], at('c'), [])), ['10.1.2.4']);
  assert.deepEqual(texts(allocate(s, [v4], at('d'), [])), ['10.1.2.5']);
  assert.deepEqual(texts(allocate(s, [v4], at('e'), [])), ['10.1.2.6']);
  // wraps to the freed .2, skipping the gateway .1
  assert.deepEqual(texts(allocate(s, [v4], at('f'), [])), ['10.1.2.2']);
  assert.equal(codeOf(() => allocate(s, [v4], at('g'), [])), HostLocalCode.rangeExhausted);
  assert.equal(s.snapshot().size, 5);
});

void test('exhaustion message names the range set', () => {
  const s = new MemoryStore();
  const tiny: RangeSet = [range('10.5.0.0/30')];
  allocate(s, [tiny], at('a'), []);
  assert.throws(() => allocate(s, [tiny], at('b'), []), /no IP addresses available in range set 0: 10\.5\.0\.1-10\.5\.0\.2/);
});

void test('dual stack: one address per set; failure in set 1 releases set 0', () => {
  const s = new MemoryStore();
  const v6: RangeSet = [range('fd00::/126')]; // ::1 gw, ::2, ::3
  assert.deepEqual(texts(allocate(s, [v4, v6], at('a'), [])), ['10.1.2.2', 'fd00::2']);
  assert.deepEqual(texts(allocate(s, [v4, v6], at('b'), [])), ['10.1.2.3', 'fd00::3']);
  assert.equal(codeOf(() => allocate(s, [v4, v6], at('c'), [])), HostLocalCode.rangeExhausted);
  assert.deepEqual([...s.snapshot().keys()].sort(), ['10.1.2.2', '10.1.2.3', 'fd00::2', 'fd00::3']);
});

void test('requested addresses: honoured, refused when held, gateway or unplaceable', () => {
  const s = new MemoryStore();
  assert.deepEqual(texts(allocate(s, [v4], at('a'), [ip('10.1.2.5')])), ['10.1.2.5']);
  assert.equal(codeOf(() => allocate(s, [v4], at('b'), [ip('10.1.2.5')])), HostLocalCode.requestedUnavailable);
  assert.equal(codeOf(() => allocate(s, [v4], at('b'), [ip('10.1.2.1')])), HostLocalCode.requestedIsGateway);
  assert.equal(codeOf(() => allocate(s, [v4], at('b'), [ip('10.9.9.9')])), HostLocalCode.requestedNotInRange);
  assert.equal(codeOf(() => allocate(s, [v4], at('b'), [ip('10.1.2.3'), ip('10.1.2.4')])), HostLocalCode.requestedNotInRange);
  assert.deepEqual([...s.snapshot().keys()], ['10.1.2.5'], 'failed calls left nothing behind');
  // The failed call above reserved .3 before failing: like the reference, last_reserved_ip keeps it
  // (rollback frees the address, not the round-robin position), so the next ADD gets .4.
  assert.deepEqual(texts(allocate(s, [v4], at('c'), [])), ['10.1.2.4']);
});

void test('duplicate allocation for one attachment is refused; another ifname is fine', () => {
  const s = new MemoryStore();
  allocate(s, [v4], at('a'), []);
  assert.equal(codeOf(() => allocate(s, [v4], at('a'), [])), HostLocalCode.duplicateAllocation);
  assert.deepEqual(texts(allocate(s, [v4], at('a', 'eth1'), [])), ['10.1.2.3']);
});

void test('release and find by (containerID, ifname), legacy ID-only entries as fallback', () => {
  const s = new MemoryStore([
    { ip: ip('10.1.2.2'), containerId: 'a', ifname: 'eth0' },
    { ip: ip('10.1.2.3'), containerId: 'a', ifname: 'eth1' },
    { ip: ip('10.1.2.4'), containerId: 'old', ifname: null },
  ]);
  assert.deepEqual(texts(findAttachment(s, at('a', 'eth1'))), ['10.1.2.3']);
  assert.deepEqual(texts(releaseAttachment(s, at('a'))), ['10.1.2.2']);
  assert.deepEqual(texts(releaseAttachment(s, at('a'))), [], 'second DEL is a no-op');
  assert.deepEqual(texts(releaseAttachment(s, at('old'))), ['10.1.2.4']);
  assert.deepEqual([...s.snapshot().keys()], ['10.1.2.3']);
  assert.equal(s.lockCount, 4, 'each call took the lock once');
});

void test('GC keeps exactly the valid attachments', () => {
  const s = new MemoryStore();
  const set: RangeSet = [range('10.2.0.0/24')];
  for (let i = 0; i < 20; i++) allocate(s, [set], at(`c${i}`), []);
  const valid = [0, 3, 7, 11, 19].map((i) => at(`c${i}`));
  const freed = collectGarbage(s, [...valid, at('c5', 'eth9'), at('nobody')]);
  assert.equal(freed.length, 15);
  assert.deepEqual([...s.snapshot().values()].map((h) => h.containerId).sort(), ['c0', 'c11', 'c19', 'c3', 'c7']);
});

void test('GC keeps a legacy entry when any interface of its container is valid', () => {
  const s = new MemoryStore([{ ip: ip('10.1.2.4'), containerId: 'old', ifname: null }]);
  assert.equal(collectGarbage(s, [at('old', 'net1')]).length, 0);
  assert.equal(collectGarbage(s, [at('other')]).length, 1);
});

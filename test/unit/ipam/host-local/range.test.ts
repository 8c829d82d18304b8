// Unit tests for ipam/host-local/range.ts: defaults, validation and round-robin order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatIp } from '../../../../lib/ip/index.ts';
import {
  formatRange,
  formatRangeSet,
  iterateRangeSet,
  rangeContains,
  rangeSetCapacity,
  validateRangeSet,
} from '../../../../ipam/host-local/range.ts';
import type { RangeSet } from '../../../../ipam/host-local/range.ts';
import { ip, range } from './helpers.ts';

function order(set: RangeSet, last: string | null, limit = 1000): string[] {
  const out: string[] = [];
  for (const c of iterateRangeSet(set, last === null ? null : ip(last))) {
    out.push(formatIp(c.ip));
    if (out.length >= limit) break;
  }
  return out;
}

void test('defaults match the reference', () => {
  const r = range('10.1.2.0/24');
  assert.equal(formatIp(r.gateway), '10.1.2.1');
  assert.equal(formatRange(r), '10.1.2.1-10.1.2.254');
  const r6 = range('fd00::/120');
  assert.equal(formatRange(r6), 'fd00::1-fd00::ff', 'IPv6 keeps the last address');
  assert.equal(formatRange(range('10.5.0.0/30')), '10.5.0.1-10.5.0.2');
});

void test('validation refuses what the reference refuses', () => {
  assert.throws(() => range('10.1.2.5/24'), /host bits set; the network address is 10\.1\.2\.0/);
  assert.throws(() => range('10.1.2.0/31'), /too small/);
  assert.throws(() => range('fd00::/127'), /too small/);
  assert.throws(() => range('10.1.2.0/24', { start: '10.1.3.1' }), /rangeStart 10\.1\.3\.1 is not in subnet/);
  assert.throws(() => range('10.1.2.0/24', { end: 'fd00::1' }), /not the same family/);
  assert.throws(() => range('10.1.2.0/24', { start: '10.1.2.50', end: '10.1.2.40' }), /after rangeEnd/);
  assert.throws(() => range('10.1.2.0/24', { gw: 'fd00::1' }), /not the same family/);
  // The reference (1.1.1) accepts a gateway outside the subnet.
  assert.equal(formatIp(range('10.1.2.0/24', { gw: '10.1.3.1' }).gateway), '10.1.3.1');
  assert.throws(() => validateRangeSet([]), /empty range set/);
  assert.throws(() => validateRangeSet([range('10.1.2.0/24'), range('fd00::/64')]), /mixed/);
  assert.throws(() => validateRangeSet([range('10.1.0.0/16'), range('10.1.2.0/24')]), /overlap/);
  validateRangeSet([range('10.1.2.0/24', { end: '10.1.2.100' }), range('10.1.2.0/24', { start: '10.1.2.101' })]);
});

void test('contains honours start and end', () => {
  const r = range('10.6.0.0/29', { start: '10.6.0.3', end: '10.6.0.4' });
  assert.ok(!rangeContains(r, ip('10.6.0.2')));
  assert.ok(rangeContains(r, ip('10.6.0.3')));
  assert.ok(rangeContains(r, ip('10.6.0.4')));
  assert.ok(!rangeContains(r, ip('10.6.0.5')));
  assert.ok(!rangeContains(r, ip('fd00::3')));
});

void test('round-robin order: from the start, skipping the gateway', () => {
  const set = [range('10.5.0.0/30'), range('10.6.0.0/29', { start: '10.6.0.3', end: '10.6.0.4' })];
  assert.equal(formatRangeSet(set), '10.5.0.1-10.5.0.2,10.6.0.3-10.6.0.4');
  assert.deepEqual(order(set, null), ['10.5.0.2', '10.6.0.3', '10.6.0.4']);
  assert.equal(rangeSetCapacity(set), 3n);
});

void test('round-robin order: after the last reserved address, wrapping, last one last', () => {
  const set = [range('10.5.0.0/30'), range('10.6.0.0/29', { start: '10.6.0.3', end: '10.6.0.4' })];
  assert.deepEqual(order(set, '10.6.0.3'), ['10.6.0.4', '10.5.0.2', '10.6.0.3']);
  assert.deepEqual(order(set, '10.6.0.4'), ['10.5.0.2', '10.6.0.3', '10.6.0.4']);
  // A last address outside the set (e.g. range indexes changed) restarts from the beginning.
  assert.deepEqual(order(set, '10.9.9.9'), ['10.5.0.2', '10.6.0.3', '10.6.0.4']);
});

void test('gateway in the middle of a range is skipped; custom gateway frees .1', () => {
  const set = [range('10.1.2.0/29', { gw: '10.1.2.3' })];
  assert.deepEqual(order(set, null), ['10.1.2.1', '10.1.2.2', '10.1.2.4', '10.1.2.5', '10.1.2.6']);
  assert.deepEqual(order(set, '10.1.2.2'), ['10.1.2.4', '10.1.2.5', '10.1.2.6', '10.1.2.1', '10.1.2.2']);
});

void test('IPv6 iteration is lazy on a /64', () => {
  const set = [range('fd00::/64')];
  assert.deepEqual(order(set, 'fd00::ffff', 3), ['fd00::1:0', 'fd00::1:1', 'fd00::1:2']);
  assert.equal(rangeSetCapacity(set), (1n << 64n) - 2n);
});

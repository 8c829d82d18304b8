// Unit tests for lib/ip/cidr.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatIp, parseIp } from '../../../../lib/ip/addr.ts';
import {
  canonicalCidr,
  cidrContains,
  cidrOverlaps,
  cidrSize,
  formatCidr,
  hasHostBits,
  lastOf,
  networkOf,
  parseCidr,
} from '../../../../lib/ip/cidr.ts';

function cidr(s: string) {
  const c = parseCidr(s);
  assert.ok(c, s);
  return c;
}
function ip(s: string) {
  const a = parseIp(s);
  assert.ok(a, s);
  return a;
}

void test('parse/format CIDR', () => {
  assert.equal(formatCidr(cidr('10.1.2.0/24')), '10.1.2.0/24');
  assert.equal(formatCidr(cidr('fd00:0::0/64')), 'fd00::/64');
  assert.equal(formatCidr(cidr('10.1.2.5/24')), '10.1.2.5/24');
  assert.equal(formatCidr(canonicalCidr(cidr('10.1.2.5/24'))), '10.1.2.0/24');
  for (const bad of ['10.1.2.0', '10.1.2.0/33', '10.1.2.0/-1', '10.1.2.0/024', 'fd00::/129', '/24', '10.1.2.0/', 'x/8']) {
    assert.equal(parseCidr(bad), null, bad);
  }
  assert.equal(cidr('0.0.0.0/0').prefix, 0);
  assert.equal(cidr('::/128').prefix, 128);
});

void test('network, last, host bits, size', () => {
  const c = cidr('10.1.2.77/24');
  assert.ok(hasHostBits(c));
  assert.equal(formatIp(networkOf(c)), '10.1.2.0');
  assert.equal(formatIp(lastOf(c)), '10.1.2.255');
  assert.ok(!hasHostBits(cidr('10.1.2.0/24')));
  assert.equal(formatIp(lastOf(cidr('fd00::/120'))), 'fd00::ff');
  assert.equal(formatIp(lastOf(cidr('0.0.0.0/0'))), '255.255.255.255');
  assert.equal(cidrSize(cidr('10.0.0.0/30')), 4n);
  assert.equal(cidrSize(cidr('fd00::/64')), 1n << 64n);
});

void test('contains and overlaps', () => {
  const c = cidr('10.1.2.0/24');
  assert.ok(cidrContains(c, ip('10.1.2.0')));
  assert.ok(cidrContains(c, ip('10.1.2.255')));
  assert.ok(!cidrContains(c, ip('10.1.3.0')));
  assert.ok(!cidrContains(c, ip('::ffff:10.1.2.1')), 'families differ');
  assert.ok(cidrContains(cidr('fd00::/64'), ip('fd00::ffff:1')));
  assert.ok(cidrOverlaps(cidr('10.0.0.0/8'), c));
  assert.ok(cidrOverlaps(c, cidr('10.0.0.0/8')));
  assert.ok(!cidrOverlaps(c, cidr('10.1.3.0/24')));
  assert.ok(!cidrOverlaps(c, cidr('::/0')));
});

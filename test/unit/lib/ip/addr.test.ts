// Unit tests for lib/ip/addr.ts: parsing and Go-compatible formatting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  compareIp,
  formatIp,
  ipAddr,
  isMapped,
  nextIp,
  normalizeIp,
  parseIp,
  parseV4Number,
  prevIp,
  toMapped,
} from '../../../../lib/ip/addr.ts';

function roundTrip(s: string): string {
  const a = parseIp(s);
  assert.ok(a, `parse ${s}`);
  return formatIp(normalizeIp(a));
}

void test('IPv4 parse/format', () => {
  assert.deepEqual(parseIp('10.1.2.3'), { family: 4, value: 0x0a010203n });
  assert.equal(roundTrip('0.0.0.0'), '0.0.0.0');
  assert.equal(roundTrip('255.255.255.255'), '255.255.255.255');
  for (const bad of ['', '1.2.3', '1.2.3.4.5', '256.1.1.1', '01.2.3.4', '1.2.3.-1', '1.2.3.4 ', 'a.b.c.d', '1..2.3']) {
    assert.equal(parseIp(bad), null, bad);
  }
});

// Expected strings are what Go's net.IP.String() prints (RFC 5952 with Go's tie rule: first run wins).
const goForms: Array<[string, string]> = [
  ['2001:db8::1', '2001:db8::1'],
  ['2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
  ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
  ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1'],
  ['1:0:1:0:1:0:1:0', '1:0:1:0:1:0:1:0'],
  ['1:2:3:4:5:6:0:8', '1:2:3:4:5:6:0:8'],
  ['1:0:0:4:5:6:7:8', '1::4:5:6:7:8'],
  ['::', '::'],
  ['::1', '::1'],
  ['1::', '1::'],
  ['fd00:0:0:0:0:0:0:203', 'fd00::203'],
  ['FD00::ABCD', 'fd00::abcd'],
  ['::1.2.3.4', '::102:304'],
  ['1:2:3:4:5:6:1.2.3.4', '1:2:3:4:5:6:102:304'],
  ['::ffff:10.1.2.3', '10.1.2.3'],
  ['::ffff:a01:203', '10.1.2.3'],
  ['fd00::ffff:ffff:ffff:ffff', 'fd00::ffff:ffff:ffff:ffff'],
];

void test('parseV4Number: the 32-bit value of dotted IPv4 text, null for anything else', () => {
  assert.equal(parseV4Number('10.244.1.2'), 0x0af40102);
  assert.equal(parseV4Number('255.255.255.255'), 0xffffffff);
  assert.equal(parseV4Number('0.0.0.0'), 0);
  for (const bad of ['010.1.1.1', '1.2.3', '1.2.3.4.5', '1.2.3.256', '1..2.3', '1.2.3.4 ', '::1', '']) assert.equal(parseV4Number(bad), null, bad);
});

void test('IPv6 formatting matches Go net.IP.String', () => {
  for (const [input, want] of goForms) assert.equal(roundTrip(input), want, input);
});

void test('IPv6 rejects malformed text', () => {
  for (const bad of [':', ':::', '1:::2', '1::2::3', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7', '12345::', 'g::', '1:2:3:4:5:6:7::8', '::1.2.3', 'fe80::1%eth0', '[::1]']) {
    assert.equal(parseIp(bad), null, bad);
  }
});

void test('mapped addresses keep their family until normalised', () => {
  const m = parseIp('::ffff:1.2.3.4');
  assert.ok(m);
  assert.equal(m.family, 6);
  assert.ok(isMapped(m));
  assert.equal(formatIp(m), '::ffff:1.2.3.4');
  assert.deepEqual(normalizeIp(m), { family: 4, value: 0x01020304n });
  assert.deepEqual(toMapped(normalizeIp(m)), m);
  const plain = parseIp('fd00::1');
  assert.ok(plain);
  assert.equal(normalizeIp(plain), plain);
});

void test('next/prev wrap and compare orders', () => {
  assert.equal(formatIp(nextIp(ipAddr(4, 0x0a0102ffn))), '10.1.3.0');
  assert.equal(formatIp(nextIp(ipAddr(4, 0xffffffffn))), '0.0.0.0');
  assert.equal(formatIp(prevIp(ipAddr(4, 0n))), '255.255.255.255');
  const v6 = parseIp('fd00::ffff');
  assert.ok(v6);
  assert.equal(formatIp(nextIp(v6)), 'fd00::1:0');
  assert.equal(formatIp(prevIp(nextIp(v6))), 'fd00::ffff');
  assert.ok(compareIp(ipAddr(4, 5n), ipAddr(6, 1n)) < 0);
  assert.ok(compareIp(ipAddr(4, 5n), ipAddr(4, 4n)) > 0);
  assert.equal(compareIp(ipAddr(6, 7n), ipAddr(6, 7n)), 0);
  assert.throws(() => ipAddr(4, 1n << 32n), RangeError);
});

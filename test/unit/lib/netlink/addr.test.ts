import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatCidr, formatIP, formatMac, ipFamily, parseCidr, parseIP, parseMac } from '../../../../lib/netlink/addr.ts';
import { hex, toHex } from './golden.ts';

test('IPv4 parse/format round trip', () => {
  assert.equal(toHex(parseIP('10.244.3.1')), '0a f4 03 01');
  assert.equal(formatIP(hex('c0 a8 00 ff')), '192.168.0.255');
  for (const bad of ['10.0.0', '10.0.0.256', '1.2.3.4.5', '01.2.3.x', '']) assert.throws(() => parseIP(bad), /invalid IP address/);
});

test('IPv6 parse handles ::, embedded IPv4 and rejects garbage', () => {
  assert.equal(toHex(parseIP('fd00::2')), 'fd 00 00 00 00 00 00 00 00 00 00 00 00 00 00 02');
  assert.equal(toHex(parseIP('::')), Array(16).fill('00').join(' '));
  assert.equal(toHex(parseIP('::ffff:10.0.0.1')), '00 00 00 00 00 00 00 00 00 00 ff ff 0a 00 00 01');
  assert.equal(toHex(parseIP('1:2:3:4:5:6:7:8')), '00 01 00 02 00 03 00 04 00 05 00 06 00 07 00 08');
  for (const bad of ['1::2::3', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7', 'fe80::1%eth0', '12345::', ':::']) {
    assert.throws(() => parseIP(bad), /invalid IP address/, bad);
  }
});

test('IPv6 format is RFC 5952 canonical', () => {
  const cases: Array<[string, string]> = [
    ['fd00:0:0:0:0:0:0:2', 'fd00::2'],
    ['0:0:0:0:0:0:0:0', '::'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['2001:db8:0:1:0:0:0:1', '2001:db8:0:1::1'], // longest run wins
    ['2001:0:0:1:0:0:1:1', '2001::1:0:0:1:1'], // first of equal runs
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'], // a single zero group is not compressed
    ['FE80:0:0:0:ABCD:0:0:0', 'fe80::abcd:0:0:0'],
  ];
  for (const [input, want] of cases) assert.equal(formatIP(parseIP(input)), want, input);
});

test('CIDR and family', () => {
  assert.deepEqual(parseCidr('10.0.0.2/24'), { family: 4, bytes: hex('0a 00 00 02'), prefix: 24 });
  assert.equal(parseCidr('fd00::1').prefix, 128);
  assert.equal(parseCidr('0.0.0.0/0').prefix, 0);
  assert.throws(() => parseCidr('10.0.0.0/33'), /invalid CIDR prefix/);
  assert.throws(() => parseCidr('10.0.0.0/x'), /invalid CIDR prefix/);
  assert.equal(formatCidr(hex('0a 00 00 00'), 8), '10.0.0.0/8');
  assert.equal(ipFamily('::1'), 6);
  assert.equal(ipFamily('1.2.3.4'), 4);
});

test('MAC parse/format, lowercase out', () => {
  assert.equal(toHex(parseMac('AA:bb:0c:00:11:22')), 'aa bb 0c 00 11 22');
  assert.equal(formatMac(hex('0a 58 0a f4 00 01')), '0a:58:0a:f4:00:01');
  assert.equal(formatMac(new Uint8Array(0)), '');
  assert.equal(formatMac(hex('ff 00 0a')), 'ff:00:0a', 'lengths other than 6 too');
  for (let v = 0; v < 256; v++) assert.equal(formatMac(Uint8Array.of(v, 255 - v, 0, 1, v, 16)), [v, 255 - v, 0, 1, v, 16].map((x) => x.toString(16).padStart(2, '0')).join(':'));
  for (const bad of ['aa:bb:cc:dd:ee', 'aa:bb:cc:dd:ee:fg', 'aabbccddeeff']) assert.throws(() => parseMac(bad), /invalid MAC/);
});

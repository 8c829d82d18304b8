import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  attrBe16, attrMap, attrNested, attrS32, attrStr, attrU16, attrU32, attrU8, getBe16, getS32, getStr, getU16, getU32, getU8,
  parseAttrs, rawExtras,
} from '../../../../lib/netlink/attrs.ts';
import { hex, toHex } from './golden.ts';

test('scalar attributes: header, host-order payload, padding to 4', () => {
  assert.equal(toHex(attrU8(7, 0)), '05 00 07 00 00 00 00 00'); // IFLA_VXLAN_LEARNING off, as iproute2 sends it
  assert.equal(toHex(attrU16(5, 0x1234)), '06 00 05 00 34 12 00 00');
  assert.equal(toHex(attrBe16(15, 8472)), '06 00 0f 00 21 18 00 00'); // IFLA_VXLAN_PORT is __be16
  assert.equal(toHex(attrU32(4, 1400)), '08 00 04 00 78 05 00 00');
  assert.equal(toHex(attrS32(37, -1)), '08 00 25 00 ff ff ff ff');
});

test('string attributes carry a NUL and are padded', () => {
  assert.equal(toHex(attrStr(3, 'v0')), '07 00 03 00 76 30 00 00');
  assert.equal(toHex(attrStr(1, 'veth')), '09 00 01 00 76 65 74 68 00 00 00 00');
});

test('nested attributes, with and without NLA_F_NESTED', () => {
  const inner = attrU8(4, 1);
  assert.equal(toHex(attrNested(12, [inner], true)), '0c 00 0c 80 05 00 04 00 01 00 00 00');
  assert.equal(toHex(attrNested(18, [attrStr(1, 'veth')])), '10 00 12 00 09 00 01 00 76 65 74 68 00 00 00 00');
});

test('parse round trip, flags stripped from the type, last duplicate wins', () => {
  const buf = hex('0c 00 0c 80 05 00 04 00 01 00 00 00 08 00 04 00 78 05 00 00 08 00 04 00 dc 05 00 00 07 00 03 00 76 30 00 00');
  const attrs = parseAttrs(buf);
  assert.deepEqual(attrs.map((a) => [a.type, a.nested, a.data.length]), [[12, true, 8], [4, false, 4], [4, false, 4], [3, false, 3]]);
  const m = attrMap(attrs);
  assert.equal(getU32(m.get(4)!), 1500);
  assert.equal(getStr(m.get(3)!), 'v0');
  const nested = parseAttrs(m.get(12)!.data);
  assert.equal(getU8(nested[0]!), 1);
});

test('getters read what the formatters wrote', () => {
  const [a, b, c, d] = parseAttrs(Buffer.concat([attrU16(1, 513), attrBe16(2, 4789), attrS32(3, -42), attrStr(4, 'flannel.1')]));
  assert.equal(getU16(a!), 513);
  assert.equal(getBe16(b!), 4789);
  assert.equal(getS32(c!), -42);
  assert.equal(getStr(d!), 'flannel.1');
});

test('malformed attribute lengths throw; trailing slack shorter than a header is ignored', () => {
  assert.throws(() => parseAttrs(hex('10 00 01 00 00 00')), /malformed netlink attribute/);
  assert.throws(() => parseAttrs(hex('02 00 01 00')), /malformed netlink attribute/);
  assert.equal(parseAttrs(hex('08 00 01 00 01 00 00 00 00 00')).length, 1);
});

test('rawExtras keeps unknown attributes as copied bytes', () => {
  const buf = Buffer.concat([attrU32(4, 1500), attrU32(99, 7)]);
  const extras = rawExtras(parseAttrs(buf), new Set([4]));
  assert.equal(extras.length, 1);
  assert.equal(extras[0]!.type, 99);
  assert.equal(toHex(extras[0]!.data), '07 00 00 00');
  buf.fill(0); // a copy: later reuse of the receive buffer must not change it
  assert.equal(toHex(extras[0]!.data), '07 00 00 00');
});

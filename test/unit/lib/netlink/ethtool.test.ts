// ethtool genetlink features: request bytes against ethtool 6.1's own (strace on kernel 6.18), and
// the verbose bit-set forms the kernel answers FEATURES_GET with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attrNested, attrStr, attrU32, concat, formatAttr } from '../../../../lib/netlink/attrs.ts';
import { NetlinkError } from '../../../../lib/netlink/errors.ts';
import {
  ETHTOOL_A_BITSET_BITS, ETHTOOL_A_BITSET_BITS_BIT, ETHTOOL_A_BITSET_BIT_INDEX, ETHTOOL_A_BITSET_BIT_NAME, ETHTOOL_A_BITSET_BIT_VALUE,
  ETHTOOL_A_BITSET_NOMASK, ETHTOOL_A_FEATURES_ACTIVE, ETHTOOL_A_FEATURES_HEADER, ETHTOOL_MSG_FEATURES_GET, ETHTOOL_MSG_FEATURES_SET,
  Ethtool, TX_CHECKSUM_IP_GENERIC, formatFeaturesGet, formatFeaturesSet, parseActiveFeatures,
} from '../../../../lib/netlink/ethtool.ts';
import { formatNlMsg } from '../../../../lib/netlink/framing.ts';
import { GENL_ID_CTRL, Genl, formatGenlMsg } from '../../../../lib/netlink/genl.ts';
import { FAKE_PID, FakeKernel, ack } from './fake-kernel.ts';
import { sx, toHex } from './golden.ts';

/**
 * `ethtool -K vx0 tx-checksum-ip-generic off`: FEATURES_SET payload after the genlmsghdr. ethtool left
 * its last padding byte uninitialised (0x65 in the capture); the kernel ignores padding, we send 0.
 */
const SET_OFF = String.raw`\x14\x00\x01\x80\x08\x00\x02\x00\x76\x78\x30\x00\x08\x00\x03\x00\x01\x00\x00\x00\x28\x00\x03\x80\x24\x00\x03\x80\x20\x00\x01\x80\x1b\x00\x02\x00\x74\x78\x2d\x63\x68\x65\x63\x6b\x73\x75\x6d\x2d\x69\x70\x2d\x67\x65\x6e\x65\x72\x69\x63\x00\x00`;
const NEWFAMILY = String.raw`\x01\x02\x00\x00\x06\x00\x01\x00\x15\x00\x00\x00\x08\x00\x03\x00\x01\x00\x00\x00`;

test('formatFeaturesSet off: the bytes ethtool -K sends', () => {
  assert.equal(toHex(concat(formatFeaturesSet('vx0', { [TX_CHECKSUM_IP_GENERIC]: false }))), toHex(sx(SET_OFF)));
});

test('formatFeaturesSet on adds BIT_VALUE (a flag: empty attribute) inside the bit', () => {
  const on = concat(formatFeaturesSet('vx0', { [TX_CHECKSUM_IP_GENERIC]: true }));
  const off = sx(SET_OFF);
  assert.equal(on.length, off.length + 4);
  // Nest lengths grow by 4 (WANTED 0x28 -> 0x2c, BITS 0x24 -> 0x28, BIT 0x20 -> 0x24); the flag closes the bit.
  assert.deepEqual([on[20], on[24], on[28]], [0x2c, 0x28, 0x24]);
  assert.equal(toHex(on.subarray(on.length - 4)), '04 00 03 00');
});

test('formatFeaturesGet: a header naming the device, no flags (verbose bit sets)', () => {
  assert.equal(toHex(concat(formatFeaturesGet('vx0'))), '0c 00 01 80 08 00 02 00 76 78 30 00');
});

function bit(index: number, name: string, value?: boolean): Uint8Array {
  return attrNested(ETHTOOL_A_BITSET_BITS_BIT, [
    attrU32(ETHTOOL_A_BITSET_BIT_INDEX, index), attrStr(ETHTOOL_A_BITSET_BIT_NAME, name),
    ...(value === true ? [formatAttr(ETHTOOL_A_BITSET_BIT_VALUE, new Uint8Array(0))] : []),
  ], true);
}

function reply(active: Uint8Array[]): Uint8Array {
  return formatGenlMsg(ETHTOOL_MSG_FEATURES_GET, 1, [
    attrNested(ETHTOOL_A_FEATURES_HEADER, [attrStr(2, 'vx0')], true),
    attrNested(ETHTOOL_A_FEATURES_ACTIVE, active, true),
  ]);
}

test('parseActiveFeatures: NOMASK lists the bits that are on; with a mask BIT_VALUE marks them', () => {
  const nomask = reply([formatAttr(ETHTOOL_A_BITSET_NOMASK, new Uint8Array(0)), attrU32(2, 64),
    attrNested(ETHTOOL_A_BITSET_BITS, [bit(3, TX_CHECKSUM_IP_GENERIC), bit(16, 'tx-tcp-segmentation')], true)]);
  assert.deepEqual([...parseActiveFeatures(nomask)].sort(), [TX_CHECKSUM_IP_GENERIC, 'tx-tcp-segmentation']);
  const masked = reply([attrU32(2, 64), attrNested(ETHTOOL_A_BITSET_BITS, [bit(3, TX_CHECKSUM_IP_GENERIC, false), bit(0, 'tx-scatter-gather', true)], true)]);
  assert.deepEqual([...parseActiveFeatures(masked)], ['tx-scatter-gather']);
  assert.throws(() => parseActiveFeatures(formatGenlMsg(ETHTOOL_MSG_FEATURES_GET, 1, [])), /ACTIVE/);
});

test('Ethtool over a fake kernel: resolves the family, then sends FEATURES_SET with its id and version', () => {
  const k = new FakeKernel((req) => {
    if (req.type === GENL_ID_CTRL) return [formatNlMsg({ type: GENL_ID_CTRL, flags: 0, seq: req.seq, pid: FAKE_PID, payload: sx(NEWFAMILY) }), ack(req)];
    return [ack(req, req.payload[0] === ETHTOOL_MSG_FEATURES_SET ? 0 : 95)];
  });
  const e = Ethtool.over(Genl.fromTransport(k));
  e.setFeatures('vx0', { [TX_CHECKSUM_IP_GENERIC]: false });
  assert.equal(k.last.type, 0x15);
  assert.equal(toHex(k.last.payload), toHex(concat([Uint8Array.of(ETHTOOL_MSG_FEATURES_SET, 1, 0, 0), sx(SET_OFF)])));
  const err = (() => { try { e.activeFeatures('vx0'); } catch (x) { return x; } return null; })();
  assert.ok(err instanceof NetlinkError && err.errno === 95, String(err));
  e.close();
  assert.ok(k.closed);
});

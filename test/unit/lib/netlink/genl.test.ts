// Generic netlink framing and family resolution against bytes captured from ethtool 6.1 on kernel
// 6.18 (`strace -e trace=sendto,recvmsg -xx ethtool -K vx0 tx-checksum-ip-generic off`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NLM_F_ACK, NLM_F_REQUEST } from '../../../../lib/netlink/constants.ts';
import { NetlinkError } from '../../../../lib/netlink/errors.ts';
import { formatNlMsg } from '../../../../lib/netlink/framing.ts';
import { GENL_ID_CTRL, Genl, formatGetFamily, parseFamily, parseGenlMsg } from '../../../../lib/netlink/genl.ts';
import { FAKE_PID, FakeKernel, ack } from './fake-kernel.ts';
import { sx, toHex } from './golden.ts';

/** ethtool's CTRL_CMD_GETFAMILY request payload. */
const GETFAMILY_ETHTOOL = String.raw`\x03\x01\x00\x00\x0c\x00\x02\x00\x65\x74\x68\x74\x6f\x6f\x6c\x00`;
/** The kernel's answer, up to CTRL_ATTR_MAXATTR (the ops and groups nests that follow are cut): id 0x15, version 1. */
const NEWFAMILY_ETHTOOL = String.raw`\x01\x02\x00\x00\x0c\x00\x02\x00\x65\x74\x68\x74\x6f\x6f\x6c\x00\x06\x00\x01\x00\x15\x00\x00\x00\x08\x00\x03\x00\x01\x00\x00\x00\x08\x00\x04\x00\x00\x00\x00\x00\x08\x00\x05\x00\x00\x00\x00\x00`;

test('formatGetFamily: the bytes ethtool sends to the controller', () => {
  assert.equal(toHex(formatGetFamily('ethtool')), toHex(sx(GETFAMILY_ETHTOOL)));
});

test('parseFamily: id and version from the controller answer; a missing id is refused', () => {
  assert.deepEqual(parseFamily(sx(NEWFAMILY_ETHTOOL)), { name: 'ethtool', id: 0x15, version: 1 });
  assert.throws(() => parseFamily(sx(GETFAMILY_ETHTOOL)), /CTRL_ATTR_FAMILY_ID/);
  assert.throws(() => parseGenlMsg(Uint8Array.of(1, 2)), /too short/);
});

test('Genl.family asks the controller once per name and keeps errno when the family is unknown', () => {
  const k = new FakeKernel((req) => {
    if (toHex(req.payload).includes(toHex(Buffer.from('nosuch')))) return [ack(req, 2)];
    return [formatNlMsg({ type: GENL_ID_CTRL, flags: 0, seq: req.seq, pid: FAKE_PID, payload: sx(NEWFAMILY_ETHTOOL) }), ack(req)];
  });
  const g = Genl.fromTransport(k);
  assert.deepEqual(g.family('ethtool'), { name: 'ethtool', id: 0x15, version: 1 });
  assert.equal(g.family('ethtool').id, 0x15);
  assert.equal(k.sent.length, 1, 'cached');
  assert.equal(k.last.type, GENL_ID_CTRL);
  assert.equal(k.last.flags, NLM_F_REQUEST | NLM_F_ACK);
  const e = (() => { try { g.family('nosuch'); } catch (err) { return err; } return null; })();
  assert.ok(e instanceof NetlinkError && e.code === 'ENOENT', String(e));
  g.close();
  assert.ok(k.closed);
});

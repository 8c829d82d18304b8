import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NLMSG_DONE, NLMSG_ERROR, NLM_F_ACK, NLM_F_ACK_TLVS, NLM_F_CAPPED, NLM_F_MULTI, NLM_F_REQUEST } from '../../../../lib/netlink/constants.ts';
import { NetlinkError, isExists, isNotFound } from '../../../../lib/netlink/errors.ts';
import { formatNlMsg, parseNlDone, parseNlError, parseNlMsgs } from '../../../../lib/netlink/framing.ts';
import { hex, sx, toHex } from './golden.ts';

test('formatNlMsg writes nlmsghdr (len, type, flags, seq, pid) and pads', () => {
  const m = formatNlMsg({ type: 18, flags: NLM_F_REQUEST | NLM_F_ACK, seq: 0x01020304, payload: hex('aa bb cc') });
  assert.equal(toHex(m), '13 00 00 00 12 00 05 00 04 03 02 01 00 00 00 00 aa bb cc 00');
});

test('parseNlMsgs splits a datagram holding several messages', () => {
  const buf = Buffer.concat([
    formatNlMsg({ type: 16, flags: NLM_F_MULTI, seq: 9, pid: 77, payload: hex('01 02 03 04 05') }),
    formatNlMsg({ type: NLMSG_DONE, flags: NLM_F_MULTI, seq: 9, pid: 77, payload: hex('00 00 00 00') }),
  ]);
  const msgs = parseNlMsgs(buf);
  assert.deepEqual(msgs.map((m) => [m.type, m.flags, m.seq, m.pid, toHex(m.payload)]), [
    [16, NLM_F_MULTI, 9, 77, '01 02 03 04 05'],
    [NLMSG_DONE, NLM_F_MULTI, 9, 77, '00 00 00 00'],
  ]);
  assert.equal(parseNlDone(msgs[1]!).errno, 0);
});

test('parseNlMsgs rejects a truncated message', () => {
  const m = formatNlMsg({ type: 16, flags: 0, seq: 1, payload: hex('01 02 03 04') });
  assert.throws(() => parseNlMsgs(m.subarray(0, 18)), /malformed netlink message/);
});

// Captured: `ip route add 10.2.0.0/16 via 10.99.0.1 dev v0` answered by the kernel (6.x) with
// ENETUNREACH, the whole request echoed (no NLM_F_CAPPED) and NLMSGERR_ATTR_MSG.
const ROUTE_ERROR = Buffer.concat([
  formatNlMsg({ type: NLMSG_ERROR, flags: NLM_F_ACK_TLVS, seq: 1796021340, pid: 11171, payload: new Uint8Array(0) }).subarray(0, 16),
  hex('9b ff ff ff'), // -101
  hex('34 00 00 00 18 00 05 06 5c 1c 0d 6b 00 00 00 00'), // echoed nlmsghdr: len 52, RTM_NEWROUTE, REQUEST|ACK|EXCL|CREATE
  sx(String.raw`\x02\x10\x00\x00\xfe\x03\x00\x01\x00\x00\x00\x00\x08\x00\x01\x00\x0a\x02\x00\x00\x08\x00\x05\x00\x0a\x63\x00\x01\x08\x00\x04\x00\x03\x00\x00\x00`),
  hex('20 00 01 00'), Buffer.from('Nexthop has invalid gateway\0'),
]);
ROUTE_ERROR.writeUInt32LE(ROUTE_ERROR.length, 0);

test('error ACK: errno, echoed request header and extended-ack message', () => {
  assert.equal(ROUTE_ERROR.length, 104); // as strace showed
  const [m] = parseNlMsgs(ROUTE_ERROR);
  assert.equal(m!.type, NLMSG_ERROR);
  const st = parseNlError(m!);
  assert.equal(st.errno, 101);
  assert.equal(st.extAck, 'Nexthop has invalid gateway');
  assert.deepEqual(st.request, { type: 24, flags: 0x605, seq: 1796021340, pid: 0 });
  const e = new NetlinkError('addRoute 10.2.0.0/16', st.errno, st.extAck);
  assert.equal(e.code, 'ENETUNREACH');
  assert.match(e.message, /^addRoute 10\.2\.0\.0\/16: .* \(ENETUNREACH\): Nexthop has invalid gateway$/);
});

test('capped error ACK with TLVs after the bare header', () => {
  const payload = Buffer.concat([hex('ef ff ff ff'), hex('5c 00 00 00 10 00 05 06 01 00 00 00 00 00 00 00'),
    hex('0c 00 01 00'), Buffer.from('no way\0\0'), hex('08 00 02 00 24 00 00 00')]);
  const st = parseNlError({ flags: NLM_F_CAPPED | NLM_F_ACK_TLVS, payload });
  assert.equal(st.errno, 17);
  assert.equal(st.extAck, 'no way');
  assert.equal(st.extAckOffset, 36);
});

test('success ACK (capped, as the kernel sends it) is errno 0', () => {
  const payload = Buffer.concat([hex('00 00 00 00'), hex('5c 00 00 00 10 00 05 06 58 6c 0d 6b 00 00 00 00')]);
  const st = parseNlError({ flags: NLM_F_CAPPED, payload });
  assert.equal(st.errno, 0);
  assert.equal(st.extAck, undefined);
});

test('DONE with a negative status and an ext-ack', () => {
  const payload = Buffer.concat([hex('ea ff ff ff'), hex('0c 00 01 00'), Buffer.from('bad dump\0\0\0\0').subarray(0, 8)]);
  const st = parseNlDone({ flags: NLM_F_ACK_TLVS, payload });
  assert.equal(st.errno, 22);
  assert.equal(st.extAck, 'bad dump');
  assert.equal(parseNlDone({ flags: 0, payload: new Uint8Array(0) }).errno, 0);
});

test('NetlinkError classification', () => {
  for (const [errno, code] of [[2, 'ENOENT'], [19, 'ENODEV'], [3, 'ESRCH'], [99, 'EADDRNOTAVAIL']] as const) {
    const e = new NetlinkError('x', errno);
    assert.equal(e.code, code);
    assert.ok(isNotFound(e), code);
    assert.ok(!isExists(e));
  }
  assert.ok(isExists(new NetlinkError('x', 17)));
  assert.ok(!isNotFound(new Error('ENOENT')));
  assert.ok(!isExists({ code: 'EEXIST' }));
});

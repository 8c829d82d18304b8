import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NLMSG_ERROR, NLM_F_ACK_TLVS, NLM_F_DUMP, NLM_F_DUMP_INTR, NLM_F_REQUEST, RTM_GETLINK, RTM_NEWLINK } from '../../../../lib/netlink/constants.ts';
import { NetlinkError, isExists, isNotFound } from '../../../../lib/netlink/errors.ts';
import { formatNlMsg } from '../../../../lib/netlink/framing.ts';
import { NlSocket } from '../../../../lib/netlink/socket.ts';
import { Rtnl } from '../../../../lib/netlink/rtnl.ts';
import { formatIfinfo } from '../../../../lib/netlink/link.ts';
import { attrStr, attrU32 } from '../../../../lib/netlink/attrs.ts';
import { IFLA_IFNAME, IFLA_MTU } from '../../../../lib/netlink/constants.ts';
import { FAKE_PID, FakeKernel, ack, done, part } from './fake-kernel.ts';

const linkMsg = (index: number, name: string) => formatIfinfo({ index }, [attrStr(IFLA_IFNAME, name), attrU32(IFLA_MTU, 1500)]);

test('request: ACK ends it; replies with a foreign seq or port id are skipped', () => {
  const k = new FakeKernel((req) => [
    formatNlMsg({ type: NLMSG_ERROR, flags: 0, seq: req.seq + 1000, pid: FAKE_PID, payload: Buffer.alloc(20, 0xff) }),
    ack(req),
  ]);
  const s = new NlSocket(k);
  assert.deepEqual(s.request('a', 16, 0, new Uint8Array(16)), []);
  // second request: an error with our seq but another port id must not be taken for ours
  k.respond = (req) => [Buffer.concat([ack(req, 17, FAKE_PID + 1), ack(req)])];
  assert.deepEqual(s.request('b', 16, 0, new Uint8Array(16)), []);
  assert.notEqual(k.sent[0]!.seq, k.sent[1]!.seq);
});

test('request: negative ACK becomes NetlinkError with errno, code, op and ext-ack', () => {
  const k = new FakeKernel((req) => {
    const p = Buffer.concat([Buffer.from([0xef, 0xff, 0xff, 0xff]), Buffer.alloc(16), Buffer.from([12, 0, 1, 0]), Buffer.from('dup\0\0\0\0\0').subarray(0, 8)]);
    return [formatNlMsg({ type: NLMSG_ERROR, flags: 0x100 | NLM_F_ACK_TLVS, seq: req.seq, pid: FAKE_PID, payload: p })];
  });
  const err = (() => { try { new NlSocket(k).request('addVeth v0', 16, 0, new Uint8Array(16)); } catch (e) { return e; } return null; })();
  assert.ok(err instanceof NetlinkError);
  assert.equal(err.errno, 17);
  assert.equal(err.code, 'EEXIST');
  assert.equal(err.op, 'addVeth v0');
  assert.equal(err.extAck, 'dup');
  assert.ok(isExists(err));
});

test('request: no reply at all is ETIMEDOUT, not a hang', () => {
  const s = new NlSocket(new FakeKernel(() => []));
  assert.throws(() => s.request('x', 16, 0, new Uint8Array(16)), (e: unknown) => e instanceof NetlinkError && e.code === 'ETIMEDOUT');
});

test('dump: multipart across datagrams up to NLMSG_DONE', () => {
  const k = new FakeKernel((req) => [
    Buffer.concat([part(req, RTM_NEWLINK, linkMsg(1, 'lo')), part(req, RTM_NEWLINK, linkMsg(2, 'eth0'))]),
    Buffer.concat([part(req, RTM_NEWLINK, linkMsg(3, 'cni0')), done(req)]),
  ]);
  const links = Rtnl.fromTransport(k).listLinks();
  assert.deepEqual(links.map((l) => [l.index, l.name, l.mtu]), [[1, 'lo', 1500], [2, 'eth0', 1500], [3, 'cni0', 1500]]);
  assert.equal(k.last.type, RTM_GETLINK);
  assert.equal(k.last.flags, NLM_F_REQUEST | NLM_F_DUMP);
});

test('dump: NLM_F_DUMP_INTR makes it start over; DONE with an errno throws', () => {
  let n = 0;
  const k = new FakeKernel((req) => {
    n++;
    return [Buffer.concat([part(req, RTM_NEWLINK, linkMsg(n, `l${n}`), n === 1 ? NLM_F_DUMP_INTR : 0), done(req)])];
  });
  const links = Rtnl.fromTransport(k).listLinks();
  assert.equal(n, 2);
  assert.deepEqual(links.map((l) => l.name), ['l2']);
  const bad = new FakeKernel((req) => [done(req, 22)]);
  assert.throws(() => Rtnl.fromTransport(bad).listLinks(), (e: unknown) => e instanceof NetlinkError && e.code === 'EINVAL');
});

test('dumpEach: messages go out as they arrive; an interrupted dump calls restart before it is read again', () => {
  let n = 0;
  const k = new FakeKernel((req) => {
    n++;
    return [part(req, RTM_NEWLINK, linkMsg(n, 'a')), Buffer.concat([part(req, RTM_NEWLINK, linkMsg(n, 'b'), n === 1 ? NLM_F_DUMP_INTR : 0), done(req)])];
  });
  const seen: string[] = [];
  new NlSocket(k).dumpEach('x', RTM_GETLINK, formatIfinfo({}), (m) => seen.push(`${m.type}:${m.payload.length}:${n}`), () => seen.push('restart'));
  assert.equal(n, 2);
  assert.deepEqual(seen.map((x) => x.split(':')[0] === 'restart' ? 'restart' : x.split(':')[2]), ['1', '1', 'restart', '2', '2']);
  let always = 0;
  const intr = new FakeKernel((req) => { always++; return [Buffer.concat([part(req, RTM_NEWLINK, linkMsg(1, 'a'), NLM_F_DUMP_INTR), done(req)])]; });
  assert.throws(() => new NlSocket(intr).dumpEach('y', RTM_GETLINK, formatIfinfo({}), () => {}, () => {}), (e: unknown) => e instanceof NetlinkError && e.code === 'EINTR');
  assert.equal(always, 4, 'the first dump and three retries');
});

test('dumpEach: the reply timeout runs from the last datagram, so a slow reader of a long dump is not cut off', (t) => {
  t.mock.timers.enable({ apis: ['Date'] });
  const waits: number[] = [];
  const k = new FakeKernel((req) => [part(req, RTM_NEWLINK, linkMsg(1, 'a')), part(req, RTM_NEWLINK, linkMsg(2, 'b')), part(req, RTM_NEWLINK, linkMsg(3, 'c')), done(req)]);
  const recv = k.recv.bind(k);
  k.recv = (timeoutMs) => { waits.push(timeoutMs); return recv(timeoutMs); };
  let seen = 0;
  // Each message takes the reader 3 s (a collection, a loaded node): 9 s in all, longer than one wait.
  new NlSocket(k).dumpEach('slow', RTM_GETLINK, formatIfinfo({}), () => { seen++; t.mock.timers.tick(3000); }, () => {});
  assert.equal(seen, 3);
  assert.equal(waits.length, 4);
  assert.ok(waits.every((w) => w === waits[0] && w >= 1000), `every wait is the whole timeout: ${waits.join(', ')}`);
});

test('getLink maps ENODEV to null but rethrows other errors', () => {
  const r = Rtnl.fromTransport(new FakeKernel((req) => [ack(req, 19)]));
  assert.equal(r.getLink('nope'), null);
  const r2 = Rtnl.fromTransport(new FakeKernel((req) => [ack(req, 1)]));
  assert.throws(() => r2.getLink('x'), (e: unknown) => e instanceof NetlinkError && e.code === 'EPERM' && !isNotFound(e));
  const r3 = Rtnl.fromTransport(new FakeKernel((req) => [formatNlMsg({ type: RTM_NEWLINK, flags: 0, seq: req.seq, pid: FAKE_PID, payload: linkMsg(5, 'x') }), ack(req)]));
  assert.equal(r3.getLink('x')?.index, 5);
});

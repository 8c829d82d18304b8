// tc message bytes (struct tcmsg, tc_tbf_qopt, tc_htb_glob/opt, tc_u32_sel/key, tc_mirred) derived
// field by field from the UAPI headers (linux/pkt_sched.h, pkt_cls.h, tc_act/tc_mirred.h), the
// requests the Tc verbs send, and parse round trips of what the kernel dumps back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NLM_F_ACK, NLM_F_CREATE, NLM_F_EXCL, NLM_F_REPLACE, NLM_F_REQUEST, RTM_NEWLINK } from '../../../../lib/netlink/constants.ts';
import { Rtnl } from '../../../../lib/netlink/rtnl.ts';
import { formatHtbClassOptions, formatHtbQdiscOptions, parseHtbClassOptions, parseHtbQdiscOptions } from '../../../../lib/netlink/tc-htb.ts';
import { TCA_EGRESS_REDIR, TC_ACT_STOLEN, formatU32Options, parseU32Options } from '../../../../lib/netlink/tc-filter.ts';
import {
  ETH_P_ALL, ETH_P_IPV6, RTM_DELQDISC, RTM_NEWQDISC, RTM_NEWTFILTER, TC_H_INGRESS, TC_H_INGRESS_QDISC, TC_H_ROOT,
  filterInfo, filterPrio, filterProtocol, formatTcHandle, formatTcmsg, parseTcObject, tcHandle,
} from '../../../../lib/netlink/tc-msg.ts';
import { formatTbfOptions, parseTbfOptions } from '../../../../lib/netlink/tc-tbf.ts';
import { Tc } from '../../../../lib/netlink/tc.ts';
import { concat, parseAttrs } from '../../../../lib/netlink/attrs.ts';
import { FakeKernel } from './fake-kernel.ts';
import { hex, toHex } from './golden.ts';

const REQ = NLM_F_REQUEST | NLM_F_ACK;
// tc_ratespec of 1,250,000 B/s: cell_log 0, linklayer 1 (ethernet), overhead 0, cell_align -1, mpu 0, rate.
const RATE_10MBIT = '00 01 00 00 ff ff 00 00 d0 12 13 00';

function tcOn(k: FakeKernel): Tc {
  return new Tc(Rtnl.fromTransport(k));
}

test('handles, tcm_info and tcmsg layout', () => {
  assert.equal(tcHandle(1, 0x30), 0x00010030);
  assert.equal(formatTcHandle(tcHandle(1, 0x30)), '1:30');
  assert.equal(formatTcHandle(TC_H_INGRESS_QDISC), 'ffff:');
  assert.equal(formatTcHandle(TC_H_ROOT), 'root');
  // prio 1, protocol ETH_P_ALL in network order: 0x0001 << 16 | 0x0300.
  assert.equal(filterInfo(1, ETH_P_ALL), 0x00010300);
  assert.equal(filterProtocol({ info: filterInfo(15, ETH_P_IPV6) }), ETH_P_IPV6);
  assert.equal(filterPrio({ info: filterInfo(15, ETH_P_IPV6) }), 15);
  assert.equal(toHex(formatTcmsg({ ifindex: 7, handle: 0x10000, parent: TC_H_ROOT, info: 0x01020304 })),
    '00 00 00 00 07 00 00 00 00 00 01 00 ff ff ff ff 04 03 02 01');
});

test('addQdisc tbf = RTM_NEWQDISC, CREATE|EXCL, tcmsg, KIND "tbf", OPTIONS { TBF_PARMS tc_tbf_qopt }', () => {
  const k = new FakeKernel();
  tcOn(k).addQdisc({ ifindex: 3, handle: tcHandle(1, 0), parent: TC_H_ROOT, kind: 'tbf', options: formatTbfOptions({ rate: 1_250_000n, limit: 156_250, buffer: 1_562_500 }) });
  assert.equal(k.last.type, RTM_NEWQDISC);
  assert.equal(k.last.flags, REQ | NLM_F_CREATE | NLM_F_EXCL);
  const want = [
    '00 00 00 00 03 00 00 00 00 00 01 00 ff ff ff ff 00 00 00 00', // tcmsg: ifindex 3, handle 1:, parent root
    '08 00 01 00 74 62 66 00', // TCA_KIND "tbf\0"
    '2c 00 02 00', // TCA_OPTIONS, 4 + 40
    '28 00 01 00', // TCA_TBF_PARMS, 4 + 36
    RATE_10MBIT, // rate
    '00 00 00 00 00 00 00 00 00 00 00 00', // peakrate: none
    '5a 62 02 00', // limit 156250 = 0x2625a
    '84 d7 17 00', // buffer 1562500 = 0x17d784 ticks
    '00 00 00 00', // mtu
  ].join(' ');
  assert.equal(toHex(k.last.payload), want);
  // Options parse back (the kernel dumps the same structure).
  const q = parseTcObject(hex(want));
  assert.equal(q.kind, 'tbf');
  assert.deepEqual(parseTbfOptions(q.options), { rate: 1_250_000n, limit: 156_250, buffer: 1_562_500 });
});

test('replace and delete of a qdisc; ingress carries no options', () => {
  const k = new FakeKernel();
  const tc = tcOn(k);
  tc.addQdisc({ ifindex: 3, handle: TC_H_INGRESS_QDISC, parent: TC_H_INGRESS, kind: 'ingress' }, true);
  assert.equal(k.last.flags, REQ | NLM_F_CREATE | NLM_F_REPLACE);
  assert.equal(toHex(k.last.payload), '00 00 00 00 03 00 00 00 00 00 ff ff f1 ff ff ff 00 00 00 00 0c 00 01 00 69 6e 67 72 65 73 73 00');
  tc.delQdisc({ ifindex: 3, parent: TC_H_ROOT });
  assert.equal(k.last.type, RTM_DELQDISC);
  assert.equal(toHex(k.last.payload), '00 00 00 00 03 00 00 00 00 00 00 00 ff ff ff ff 00 00 00 00');
});

test('rates of 2^32 bytes/s and more: the ratespec saturates and a u64 attribute carries the rate', () => {
  const opts = formatTbfOptions({ rate: 1n << 33n, limit: 1, buffer: 1 });
  const attrs = parseAttrs(concat(opts));
  assert.deepEqual(attrs.map((a) => a.type), [1, 4]);
  assert.equal(parseTbfOptions(attrs)?.rate, 1n << 33n);
  const cls = parseAttrs(concat(formatHtbClassOptions({ rate: 100_000_000_000n, ceil: 100_000_000_000n, buffer: 0, cbuffer: 0 })));
  assert.deepEqual(cls.map((a) => a.type), [1, 6, 7]);
  assert.deepEqual(parseHtbClassOptions(cls), { rate: 100_000_000_000n, ceil: 100_000_000_000n, buffer: 0, cbuffer: 0 });
});

test('htb: tc_htb_glob (version 3, r2q, default) and tc_htb_opt (rate, ceil, buffer, cbuffer), no rate tables', () => {
  assert.equal(toHex(concat(formatHtbQdiscOptions({ defcls: 0x30, rate2quantum: 10 }))),
    '18 00 02 00 03 00 00 00 0a 00 00 00 30 00 00 00 00 00 00 00 00 00 00 00');
  assert.deepEqual(parseHtbQdiscOptions(parseAttrs(concat(formatHtbQdiscOptions({ defcls: 1, rate2quantum: 10 })))), { defcls: 1, rate2quantum: 10 });
  const opt = concat(formatHtbClassOptions({ rate: 1_250_000n, ceil: 2_500_000n, buffer: 1_562_500, cbuffer: 1_562_500 }));
  assert.equal(toHex(opt), [
    '30 00 01 00', RATE_10MBIT, '00 01 00 00 ff ff 00 00 a0 25 26 00',
    '84 d7 17 00', '84 d7 17 00', '00 00 00 00', '00 00 00 00', '00 00 00 00', // buffer, cbuffer, quantum, level, prio
  ].join(' '));
});

test('u32 match-all with a mirred egress redirect = tc filter add ... u32 match u32 0 0 flowid 1:1 action mirred egress redirect', () => {
  const k = new FakeKernel();
  tcOn(k).addFilter({ ifindex: 3, parent: TC_H_INGRESS_QDISC, prio: 1, protocol: ETH_P_ALL, kind: 'u32',
    options: formatU32Options({ classid: tcHandle(1, 1), keys: [], actions: [{ eaction: TCA_EGRESS_REDIR, ifindex: 9, action: TC_ACT_STOLEN }] }) });
  assert.equal(k.last.type, RTM_NEWTFILTER);
  assert.equal(k.last.flags, REQ | NLM_F_CREATE | NLM_F_EXCL);
  const want = [
    '00 00 00 00 03 00 00 00 00 00 00 00 00 00 ff ff 00 03 01 00', // tcmsg: handle 0, parent ffff:, info prio 1 / ETH_P_ALL
    '08 00 01 00 75 33 32 00', // KIND "u32"
    '68 00 02 00', // OPTIONS: 4 + 8 + 36 + 56
    '08 00 01 00 01 00 01 00', // U32_CLASSID 1:1
    '24 00 05 00 01 00 01 00 00 00 00 00 00 00 00 00 00 00 00 00', // U32_SEL: TERMINAL, nkeys 1
    '00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00', // the all-zero key
    '38 00 07 00 34 00 01 00', // U32_ACT (56) { 1 (52): {
    '0b 00 01 00 6d 69 72 72 65 64 00 00', // ACT_KIND "mirred"
    '24 00 02 00 20 00 02 00', // ACT_OPTIONS (36) { MIRRED_PARMS (4 + 28) tc_mirred
    '00 00 00 00 00 00 00 00 04 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 09 00 00 00', // action STOLEN, eaction 1, ifindex 9
  ].join(' ');
  assert.equal(toHex(k.last.payload), want);
  const f = parseTcObject(hex(want));
  assert.deepEqual(parseU32Options(f.options), { classid: tcHandle(1, 1), keys: [], actions: [{ eaction: TCA_EGRESS_REDIR, ifindex: 9, action: TC_ACT_STOLEN }] });
});

test('u32 keys: mask and value big-endian, offset host order', () => {
  const opts = concat(formatU32Options({ classid: 0, keys: [{ mask: 0xff000000, val: 0x0a000000, off: 16 }], actions: [] }));
  assert.equal(toHex(opts), '24 00 05 00 01 00 01 00 00 00 00 00 00 00 00 00 00 00 00 00 ff 00 00 00 0a 00 00 00 10 00 00 00 00 00 00 00');
  assert.deepEqual(parseU32Options(parseAttrs(opts)).keys, [{ mask: 0xff000000, val: 0x0a000000, off: 16 }]);
});

test('addIfb = RTM_NEWLINK with IFF_UP in the header, name, MTU, MAC, kind ifb, txqlen', () => {
  const k = new FakeKernel();
  Rtnl.fromTransport(k).addIfb({ name: 'bwp0', mtu: 1500, mac: '0e:77:00:00:00:01', txqlen: 1000, up: true });
  assert.equal(k.last.type, RTM_NEWLINK);
  assert.equal(toHex(k.last.payload), [
    '00 00 00 00 00 00 00 00 01 00 00 00 01 00 00 00', // ifinfomsg: flags IFF_UP, change IFF_UP
    '09 00 03 00 62 77 70 30 00 00 00 00', // IFNAME
    '08 00 04 00 dc 05 00 00', // MTU 1500
    '0a 00 01 00 0e 77 00 00 00 01 00 00', // ADDRESS
    '0c 00 12 00 07 00 01 00 69 66 62 00', // LINKINFO { KIND "ifb" }
    '08 00 0d 00 e8 03 00 00', // TXQLEN 1000
  ].join(' '));
});

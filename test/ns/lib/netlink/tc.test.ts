// tc verbs against the real kernel in a namespace this test creates: what our messages make is what
// `tc` makes from the equivalent command line (compared through `tc -j -d`), read back by our parsers.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { isNotFound } from '../../../../lib/netlink/errors.ts';
import type { Rtnl } from '../../../../lib/netlink/rtnl.ts';
import { formatHtbClassOptions, formatHtbQdiscOptions, parseHtbClassOptions, parseHtbQdiscOptions } from '../../../../lib/netlink/tc-htb.ts';
import { TCA_EGRESS_REDIR, TC_ACT_STOLEN, formatU32Options, parseU32Options } from '../../../../lib/netlink/tc-filter.ts';
import { ETH_P_ALL, ETH_P_IP, TC_H_INGRESS, TC_H_INGRESS_QDISC, TC_H_ROOT, filterPrio, filterProtocol, tcHandle } from '../../../../lib/netlink/tc-msg.ts';
import { formatTbfOptions, parseTbfOptions } from '../../../../lib/netlink/tc-tbf.ts';
import { Tc } from '../../../../lib/netlink/tc.ts';
import { NsFixture, thrown, type TestNs } from './ns-fixture.ts';

const fx = new NsFixture();
let ns: TestNs;
let r: Rtnl;
let tc: Tc;
const idx = (name: string) => r.getLink(name)!.index;
const tcj = (...args: string[]) => JSON.parse(ns.exec('tc', '-j', '-d', ...args) || '[]') as Array<Record<string, unknown>>;

before(() => {
  ns = fx.create();
  r = ns.rtnl;
  for (const n of ['a', 'b']) r.addVeth({ name: `${n}0`, peerName: `${n}1` });
  tc = new Tc(r);
});
after(() => fx.cleanup());

test('tbf: ours equals `tc qdisc add ... tbf rate 10mbit burst 125000b limit 156250b`, and parses back', () => {
  // 10 Mbit/s = 1,250,000 B/s; burst 1 Mbit = 125,000 B = 0.1 s = 1,562,500 ticks of 64 ns.
  tc.addQdisc({ ifindex: idx('a0'), handle: tcHandle(1, 0), parent: TC_H_ROOT, kind: 'tbf', options: formatTbfOptions({ rate: 1_250_000n, limit: 156_250, buffer: 1_562_500 }) });
  ns.exec('tc', 'qdisc', 'add', 'dev', 'b0', 'root', 'handle', '1:', 'tbf', 'rate', '10mbit', 'burst', '125000b', 'limit', '156250b');
  const opts = (dev: string) => tcj('qdisc', 'show', 'dev', dev)[0]?.['options'];
  assert.deepEqual(opts('a0'), opts('b0'));
  const q = tc.listQdiscs(idx('a0')).find((x) => x.kind === 'tbf');
  assert.deepEqual(parseTbfOptions(q!.options), { rate: 1_250_000n, limit: 156_250, buffer: 1_562_500 });
  assert.ok(thrown(() => tc.addQdisc({ ifindex: idx('a0'), handle: tcHandle(1, 0), parent: TC_H_ROOT, kind: 'tbf', options: formatTbfOptions({ rate: 1n, limit: 1, buffer: 1 }) })));
  tc.delQdisc({ ifindex: idx('a0'), parent: TC_H_ROOT, handle: tcHandle(1, 0) });
  ns.exec('tc', 'qdisc', 'del', 'dev', 'b0', 'root');
  assert.ok(isNotFound(thrown(() => tc.delQdisc({ ifindex: idx('a0'), parent: TC_H_ROOT }))));
});

test('tbf above 2^32 bytes/s travels in TCA_TBF_RATE64', () => {
  const rate = 50_000_000_000n; // 400 Gbit/s
  tc.addQdisc({ ifindex: idx('a0'), handle: tcHandle(1, 0), parent: TC_H_ROOT, kind: 'tbf', options: formatTbfOptions({ rate, limit: 1_000_000, buffer: 1000 }) });
  const q = tc.listQdiscs(idx('a0')).find((x) => x.kind === 'tbf');
  assert.equal(parseTbfOptions(q!.options)?.rate, rate);
  tc.delQdisc({ ifindex: idx('a0'), parent: TC_H_ROOT });
});

test('htb qdisc + classes + u32 subnet filter equal what tc makes', () => {
  const a = idx('a0');
  tc.addQdisc({ ifindex: a, handle: tcHandle(1, 0), parent: TC_H_ROOT, kind: 'htb', options: formatHtbQdiscOptions({ defcls: 0x30, rate2quantum: 10 }) });
  tc.addClass({ ifindex: a, handle: tcHandle(1, 0x30), parent: tcHandle(1, 0), kind: 'htb', options: formatHtbClassOptions({ rate: 1_250_000n, ceil: 2_500_000n, buffer: 1_562_500, cbuffer: 1_562_500 }) });
  tc.addFilter({ ifindex: a, parent: tcHandle(1, 0), prio: 16, protocol: ETH_P_IP, kind: 'u32',
    options: formatU32Options({ classid: tcHandle(1, 1), keys: [{ mask: 0xff000000, val: 0x0a000000, off: 16 }], actions: [] }) });
  ns.exec('tc', 'qdisc', 'add', 'dev', 'b0', 'root', 'handle', '1:', 'htb', 'default', '30');
  ns.exec('tc', 'class', 'add', 'dev', 'b0', 'parent', '1:', 'classid', '1:30', 'htb', 'rate', '10mbit', 'ceil', '20mbit', 'burst', '125000b', 'cburst', '250000b'); // the same 0.1 s at the ceil
  ns.exec('tc', 'filter', 'add', 'dev', 'b0', 'parent', '1:', 'protocol', 'ip', 'prio', '16', 'u32', 'match', 'ip', 'dst', '10.0.0.0/8', 'flowid', '1:1');
  const strip = (l: Array<Record<string, unknown>>) => l.map(({ dev: _d, ...rest }) => rest);
  assert.deepEqual(strip(tcj('qdisc', 'show', 'dev', 'a0')), strip(tcj('qdisc', 'show', 'dev', 'b0')));
  assert.equal(ns.exec('tc', '-d', 'class', 'show', 'dev', 'a0'), ns.exec('tc', '-d', 'class', 'show', 'dev', 'b0'));
  assert.equal(ns.exec('tc', 'filter', 'show', 'dev', 'a0'), ns.exec('tc', 'filter', 'show', 'dev', 'b0').replaceAll('b0', 'a0'));
  assert.equal(parseHtbQdiscOptions(tc.listQdiscs(a).find((q) => q.kind === 'htb')!.options)?.defcls, 0x30);
  const c = tc.listClasses(a).find((x) => x.handle === tcHandle(1, 0x30));
  assert.deepEqual(parseHtbClassOptions(c!.options), { rate: 1_250_000n, ceil: 2_500_000n, buffer: 1_562_500, cbuffer: 1_562_500 });
  const f = tc.listFilters(a, tcHandle(1, 0)).map((x) => ({ prio: filterPrio(x), proto: filterProtocol(x), ...parseU32Options(x.options) })).filter((x) => x.classid !== 0);
  assert.deepEqual(f, [{ prio: 16, proto: ETH_P_IP, classid: tcHandle(1, 1), keys: [{ mask: 0xff000000, val: 0x0a000000, off: 16 }], actions: [] }]);
  tc.delQdisc({ ifindex: a, parent: TC_H_ROOT });
  ns.exec('tc', 'qdisc', 'del', 'dev', 'b0', 'root');
});

test('ingress qdisc + match-all u32 with mirred redirect to an ifb equal what tc makes', () => {
  r.addIfb({ name: 'ifb9', up: true, mtu: 1400, txqlen: 1000, mac: '0e:77:01:02:03:04' });
  const ifb = r.getLink('ifb9')!;
  assert.deepEqual([ifb.kind, ifb.mtu, ifb.txqlen, ifb.mac, ifb.up], ['ifb', 1400, 1000, '0e:77:01:02:03:04', true]);
  for (const dev of ['a0', 'b0']) {
    if (dev === 'a0') {
      tc.addQdisc({ ifindex: idx(dev), handle: TC_H_INGRESS_QDISC, parent: TC_H_INGRESS, kind: 'ingress' });
      tc.addFilter({ ifindex: idx(dev), parent: TC_H_INGRESS_QDISC, prio: 1, protocol: ETH_P_ALL, kind: 'u32',
        options: formatU32Options({ classid: tcHandle(1, 1), keys: [], actions: [{ eaction: TCA_EGRESS_REDIR, ifindex: ifb.index, action: TC_ACT_STOLEN }] }) });
    } else {
      ns.exec('tc', 'qdisc', 'add', 'dev', dev, 'handle', 'ffff:', 'ingress');
      ns.exec('tc', 'filter', 'add', 'dev', dev, 'parent', 'ffff:', 'protocol', 'all', 'prio', '1', 'u32', 'match', 'u32', '0', '0', 'flowid', '1:1', 'action', 'mirred', 'egress', 'redirect', 'dev', 'ifb9');
    }
  }
  const show = (dev: string) => ns.exec('tc', 'filter', 'show', 'dev', dev, 'parent', 'ffff:').replace(/ \(Egress Redirect to device ifb9\)/, '').replace(/index \d+ ref/, 'index N ref');
  assert.equal(show('a0'), show('b0').replaceAll('b0', 'a0'));
  const f = tc.listFilters(idx('a0'), TC_H_INGRESS_QDISC).map((x) => parseU32Options(x.options)).filter((x) => x.actions.length > 0);
  assert.deepEqual(f.map((x) => x.actions), [[{ eaction: TCA_EGRESS_REDIR, ifindex: ifb.index, action: TC_ACT_STOLEN }]]);
  tc.delQdisc({ ifindex: idx('a0'), parent: TC_H_INGRESS, handle: TC_H_INGRESS_QDISC });
  assert.deepEqual(tc.listFilters(idx('a0'), TC_H_INGRESS_QDISC), []);
  r.deleteLink(ifb.index);
});

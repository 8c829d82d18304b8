// Address and route verbs against the real kernel, in a namespace this test creates.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { NetlinkError, isExists, isNotFound } from '../../../../lib/netlink/errors.ts';
import type { Rtnl } from '../../../../lib/netlink/rtnl.ts';
import { NsFixture, thrown, type TestNs } from './ns-fixture.ts';

type IpAddr = { ifname: string; addr_info: Array<{ family: string; local: string; prefixlen: number; broadcast?: string; nodad?: boolean; tentative?: boolean; scope: string }> };
type IpRoute = { dst: string; gateway?: string; dev: string; scope?: string; flags: string[]; protocol?: string; metric?: number; table?: string; metrics?: Array<{ mtu?: number; advmss?: number }> };

const fx = new NsFixture();
let ns: TestNs;
let r: Rtnl;
let dev: number;
before(() => {
  ns = fx.create();
  r = ns.rtnl;
  r.addVeth({ name: 'd0', peerName: 'd1' });
  dev = r.getLink('d0')!.index;
  r.setLinkUp(dev);
  r.setLinkUp(r.getLink('d1')!.index);
});
after(() => fx.cleanup());

const ipAddrs = (): IpAddr['addr_info'] => (ns.ipj('addr', 'show', 'dev', 'd0') as IpAddr[])[0]!.addr_info;

test('IPv4 address: add with broadcast, list, EEXIST twice, replace, delete, EADDRNOTAVAIL twice', () => {
  r.addAddr({ index: dev, cidr: '10.10.0.2/24', broadcast: '10.10.0.255' });
  const k = ipAddrs().find((x) => x.local === '10.10.0.2');
  assert.equal(k?.prefixlen, 24);
  assert.equal(k?.broadcast, '10.10.0.255');
  const ours = r.listAddrs({ family: 4, index: dev });
  assert.deepEqual(ours.map((x) => [x.cidr, x.broadcast, x.label]), [['10.10.0.2/24', '10.10.0.255', 'd0']]);
  assert.ok(isExists(thrown(() => r.addAddr({ index: dev, cidr: '10.10.0.2/24' }))));
  r.addAddr({ index: dev, cidr: '10.10.0.2/24', replace: true });
  r.delAddr({ index: dev, cidr: '10.10.0.2/24' });
  assert.equal(ipAddrs().filter((x) => x.family === 'inet').length, 0);
  const e = thrown(() => r.delAddr({ index: dev, cidr: '10.10.0.2/24' }));
  assert.ok(e instanceof NetlinkError && e.code === 'EADDRNOTAVAIL' && isNotFound(e), String(e));
});

test('IPv6 address with nodad is not tentative', () => {
  r.addAddr({ index: dev, cidr: 'fd00:10::2/64', noDad: true });
  const k = ipAddrs().find((x) => x.local === 'fd00:10::2');
  assert.equal(k?.prefixlen, 64);
  assert.equal(k?.nodad, true);
  assert.equal(k?.tentative, undefined);
  const ours = r.listAddrs({ family: 6 }).find((x) => x.address === 'fd00:10::2');
  assert.ok(ours && (ours.flags & 0x02) !== 0 && (ours.flags & 0x40) === 0, JSON.stringify(ours));
  assert.ok(r.listAddrs({ family: 6 }).every((x) => x.family === 6));
  r.delAddr({ index: dev, cidr: 'fd00:10::2/64' });
});

test('routes: scope link, via, onlink, table 100, replace, priority/mtu/advmss; delete twice is ESRCH', () => {
  r.addAddr({ index: dev, cidr: '10.20.0.2/24' });
  r.addRoute({ dst: '10.30.0.0/16', oif: dev }); // no gateway: link scope by default
  r.addRoute({ dst: '10.31.0.0/16', gw: '10.20.0.1', oif: dev, priority: 20, mtu: 1400, advmss: 1360 });
  r.addRoute({ dst: '10.32.0.0/16', gw: '192.168.99.1', oif: dev, onlink: true });
  r.addRoute({ dst: '0.0.0.0/0', gw: '10.20.0.1', table: 100 });
  const main = ns.ipj('route', 'show') as IpRoute[];
  const byDst = (d: string) => main.find((x) => x.dst === d);
  assert.equal(byDst('10.30.0.0/16')?.scope, 'link');
  assert.equal(byDst('10.31.0.0/16')?.gateway, '10.20.0.1');
  assert.equal(byDst('10.31.0.0/16')?.metric, 20);
  assert.deepEqual(byDst('10.31.0.0/16')?.metrics, [{ mtu: 1400, advmss: 1360 }]);
  assert.ok(byDst('10.32.0.0/16')?.flags.includes('onlink'));
  const t100 = ns.ipj('route', 'show', 'table', '100') as IpRoute[];
  assert.deepEqual(t100.map((x) => [x.dst, x.gateway]), [['default', '10.20.0.1']]);

  const ours = r.listRoutes({ family: 4, table: 254 });
  const o31 = ours.find((x) => x.dst === '10.31.0.0/16');
  assert.deepEqual([o31?.gw, o31?.oif, o31?.priority, o31?.mtu, o31?.advmss, o31?.protocol], ['10.20.0.1', dev, 20, 1400, 1360, 3]);
  assert.equal(ours.find((x) => x.dst === '10.32.0.0/16')?.onlink, true);
  assert.equal(ours.find((x) => x.dst === '10.30.0.0/16')?.scope, 253);
  assert.deepEqual(r.listRoutes({ table: 100 }).map((x) => [x.dst, x.gw, x.table]), [['0.0.0.0/0', '10.20.0.1', 100]]);

  assert.ok(isExists(thrown(() => r.addRoute({ dst: '10.30.0.0/16', oif: dev }))));
  r.addRoute({ dst: '10.30.0.0/16', gw: '10.20.0.9', oif: dev, replace: true });
  assert.equal((ns.ipj('route', 'show', '10.30.0.0/16') as IpRoute[])[0]?.gateway, '10.20.0.9');

  r.delRoute({ dst: '10.30.0.0/16' });
  r.delRoute({ dst: '0.0.0.0/0', table: 100 });
  assert.deepEqual(ns.ipj('route', 'show', 'table', '100'), []);
  const e = thrown(() => r.delRoute({ dst: '10.30.0.0/16' }));
  assert.ok(e instanceof NetlinkError && e.code === 'ESRCH' && isNotFound(e), String(e));
});

test('route errors keep the extended-ack text', () => {
  const e = thrown(() => r.addRoute({ dst: '10.40.0.0/16', gw: '10.99.0.1', oif: dev }));
  assert.ok(e instanceof NetlinkError, String(e));
  assert.equal(e.code, 'ENETUNREACH');
  assert.match(e.extAck ?? '', /gateway/i);
});

test('IPv6 route via a gateway', () => {
  r.addAddr({ index: dev, cidr: 'fd00:20::2/64', noDad: true });
  r.addRoute({ dst: 'fd00:99::/64', gw: 'fd00:20::1', oif: dev });
  const k = ns.ipj('-6', 'route', 'show', 'fd00:99::/64') as IpRoute[];
  assert.equal(k[0]?.gateway, 'fd00:20::1');
  assert.equal(r.listRoutes({ family: 6 }).find((x) => x.dst === 'fd00:99::/64')?.gw, 'fd00:20::1');
  r.delRoute({ dst: 'fd00:99::/64' });
  assert.ok(isNotFound(thrown(() => r.delRoute({ dst: 'fd00:99::/64' }))));
});

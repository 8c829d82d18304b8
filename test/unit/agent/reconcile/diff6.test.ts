import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RTPROT_WEFT, type DesiredState } from '../../../../agent/reconcile/desired.ts';
import { familyDev, planReconcile, type ActualState } from '../../../../agent/reconcile/diff.ts';
import type { Fdb, Neigh, Route } from '../../../../lib/netlink/index.ts';

const NET6 = 'fd00:10:244::/48';
const dev = familyDev({ uplink: 2, vtep: 5, vtep6: 6 }, 6);
const want: DesiredState = {
  routes: [{ dst: 'fd00:10:244:2::/64', gw: 'fd00:10:244:2::', dev: 'vtep', onlink: true }],
  neighs: [{ ip: 'fd00:10:244:2::', mac: '0e:00:00:00:06:02' }],
  fdbs: [{ mac: '0e:00:00:00:06:02', dst: '2001:db8:2::12' }],
  skipped: [],
};
const route = (o: Partial<Route>): Route => ({
  family: 6, dst: 'fd00:10:244:2::/64', gw: 'fd00:10:244:2::', oif: 6, onlink: true, scope: 0, table: 254, protocol: RTPROT_WEFT, type: 1, flags: 4, priority: 1024, extra: [], ...o,
});
const neigh = (o: Partial<Neigh>): Neigh => ({ family: 6, index: 6, ip: 'fd00:10:244:2::', mac: '0e:00:00:00:06:02', state: 0x80, permanent: true, flags: 0, extra: [], ...o });
const fdb = (o: Partial<Fdb>): Fdb => ({ index: 6, mac: '0e:00:00:00:06:02', dst: '2001:db8:2::12', state: 0xc0, permanent: true, flags: 2, self: true, extra: [], ...o });

void describe('planReconcile, IPv6', () => {
  it('familyDev resolves the VTEP of each family', () => {
    assert.deepEqual(familyDev({ uplink: 2, vtep: 5, vtep6: 6 }, 4), { uplink: 2, vtep: 5 });
    assert.deepEqual(dev, { uplink: 2, vtep: 6 });
    assert.deepEqual(familyDev({ uplink: 2 }, 6), { uplink: 2 });
  });

  it('healthy state (IPv6 routes carry metric 1024): no operation', () => {
    const p = planReconcile(want, { routes: [route({})], neighs: [neigh({})], fdbs: [fdb({})] }, dev, NET6);
    assert.deepEqual(p.ops, []);
    assert.equal(p.inPlace, 3);
  });

  it('empty kernel: neighbour, FDB, then route on flannel-v6', () => {
    const p = planReconcile(want, { routes: [], neighs: [], fdbs: [] }, dev, NET6);
    assert.deepEqual(p.ops.map((o) => o.kind), ['add-neigh', 'add-fdb', 'add-route']);
  });

  it('ignores IPv4 entries and the other VTEP; withdraws only its own IPv6 entries inside IPv6Network', () => {
    const none: DesiredState = { routes: [], neighs: [], fdbs: [], skipped: [] };
    const actual: ActualState = {
      routes: [route({}), route({ family: 4, dst: '10.244.2.0/24', gw: '10.244.2.0' }), route({ dst: 'fd00:99::/64', protocol: 3 })],
      neighs: [neigh({}), neigh({ ip: 'fe80::1', permanent: false, state: 2 }), neigh({ ip: '2001:db8:7::1' }), neigh({ index: 5, family: 4, ip: '10.244.2.0' })],
      fdbs: [fdb({}), fdb({ index: 5, dst: '192.0.2.12' })],
    };
    const p = planReconcile(none, actual, dev, NET6);
    assert.deepEqual(p.ops.map((o) => o.kind), ['del-route', 'del-fdb', 'del-neigh']);
    assert.equal(p.ops[0]?.kind === 'del-route' && p.ops[0].route.dst, 'fd00:10:244:2::/64');
    assert.equal(p.ops[2]?.kind === 'del-neigh' && p.ops[2].neigh.ip, 'fd00:10:244:2::');
  });

  it('a foreign IPv6 route of the default metric is a conflict; one with another metric is not', () => {
    // proto static: an identical proto boot route would be flanneld's and adopted (diff.test.ts).
    const conflict = planReconcile(want, { routes: [route({ protocol: 4 })], neighs: [neigh({})], fdbs: [fdb({})] }, dev, NET6);
    assert.deepEqual(conflict.conflicts, [{ dst: 'fd00:10:244:2::/64', protocol: 4 }]);
    const backup = planReconcile(want, { routes: [route({ protocol: 3, priority: 2048 })], neighs: [neigh({})], fdbs: [fdb({})] }, dev, NET6);
    assert.deepEqual(backup.conflicts, []);
    assert.deepEqual(backup.ops.map((o) => o.kind), ['add-route']);
  });

  it('refuses a network that is not a prefix', () => {
    assert.throws(() => planReconcile(want, { routes: [], neighs: [], fdbs: [] }, dev, 'fd00::'), /not an IP prefix/);
  });
});

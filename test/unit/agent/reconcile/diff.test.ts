import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RTPROT_WEFT, type DesiredState } from '../../../../agent/reconcile/desired.ts';
import { planReconcile, type ActualState } from '../../../../agent/reconcile/diff.ts';
import type { Fdb, Neigh, Route } from '../../../../lib/netlink/index.ts';

const NET = '10.244.0.0/16';
const dev = { uplink: 2, vtep: 5 };
const want: DesiredState = {
  routes: [{ dst: '10.244.2.0/24', gw: '10.244.2.0', dev: 'vtep', onlink: true }],
  neighs: [{ ip: '10.244.2.0', mac: '0e:00:00:00:00:02' }],
  fdbs: [{ mac: '0e:00:00:00:00:02', dst: '192.0.2.12' }],
  skipped: [],
};
const route = (o: Partial<Route>): Route => ({ family: 4, dst: '10.244.2.0/24', gw: '10.244.2.0', oif: 5, onlink: true, scope: 0, table: 254, protocol: RTPROT_WEFT, type: 1, flags: 4, extra: [], ...o });
const neigh = (o: Partial<Neigh>): Neigh => ({ family: 4, index: 5, ip: '10.244.2.0', mac: '0e:00:00:00:00:02', state: 0x80, permanent: true, flags: 0, extra: [], ...o });
const fdb = (o: Partial<Fdb>): Fdb => ({ index: 5, mac: '0e:00:00:00:00:02', dst: '192.0.2.12', state: 0xc0, permanent: true, flags: 2, self: true, extra: [], ...o });
const healthy: ActualState = { routes: [route({})], neighs: [neigh({})], fdbs: [fdb({})] };

void describe('planReconcile', () => {
  it('healthy state: no operation (a restart re-adds nothing)', () => {
    const p = planReconcile(want, healthy, dev, NET);
    assert.deepEqual(p.ops, []);
    assert.equal(p.inPlace, 3);
  });

  it('empty kernel: neighbour, FDB, then route', () => {
    const p = planReconcile(want, { routes: [], neighs: [], fdbs: [] }, dev, NET);
    assert.deepEqual(p.ops.map((o) => o.kind), ['add-neigh', 'add-fdb', 'add-route']);
    assert.ok(p.ops.every((o) => !('replace' in o) || o.replace === false));
  });

  it('withdraws only its own entries of a vanished lease, removals first', () => {
    const none: DesiredState = { routes: [], neighs: [], fdbs: [], skipped: [] };
    const actual: ActualState = {
      routes: [route({}), route({ dst: '10.244.7.0/24', protocol: 3 }), route({ dst: '192.168.0.0/16', protocol: 4, gw: '192.0.2.1', oif: 2, onlink: false })],
      neighs: [neigh({}), neigh({ ip: '10.244.7.0', permanent: false, state: 2 }), neigh({ ip: '172.16.0.1' })],
      fdbs: [fdb({}), fdb({ mac: '00:00:00:00:00:00', dst: '192.0.2.50' }), fdb({ mac: '0e:00:00:00:00:09', index: 9 })],
    };
    const p = planReconcile(none, actual, dev, NET);
    assert.deepEqual(p.ops.map((o) => o.kind), ['del-route', 'del-fdb', 'del-neigh']);
    assert.equal(p.ops[0]?.kind === 'del-route' && p.ops[0].route.dst, '10.244.2.0/24');
  });

  it('changed VtepMAC or peer address: replace in place', () => {
    const p = planReconcile(want, { routes: [route({})], neighs: [neigh({ mac: '0e:00:00:00:00:99' })], fdbs: [fdb({ dst: '192.0.2.99' })] }, dev, NET);
    assert.deepEqual(p.ops.map((o) => [o.kind, 'replace' in o && o.replace]), [['add-neigh', true], ['add-fdb', true]]);
  });

  it('our route on a stale device index is replaced; a foreign route is a conflict left alone', () => {
    const stale = planReconcile(want, { ...healthy, routes: [route({ oif: 3 })] }, dev, NET);
    assert.deepEqual(stale.ops.map((o) => [o.kind, 'replace' in o && o.replace]), [['add-route', true]]);
    const foreign = planReconcile(want, { ...healthy, routes: [route({ protocol: 4, gw: '192.0.2.1', oif: 2, onlink: false })] }, dev, NET);
    assert.deepEqual(foreign.ops, []);
    assert.deepEqual(foreign.conflicts, [{ dst: '10.244.2.0/24', protocol: 4 }]);
  });

  it('host-gw (no VTEP): neighbour and FDB tables are not considered', () => {
    const hg: DesiredState = { routes: [{ dst: '10.244.2.0/24', gw: '192.0.2.12', dev: 'uplink', onlink: false }], neighs: [], fdbs: [], skipped: [] };
    const p = planReconcile(hg, { routes: [route({ gw: '192.0.2.12', oif: 2, onlink: false })], neighs: [neigh({})], fdbs: [fdb({})] }, { uplink: 2 }, NET);
    assert.deepEqual(p.ops, []);
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RTPROT_WEFT, type DesiredState } from '../../../../agent/reconcile/desired.ts';
import { planReconcile, RTPROT_BOOT, type ActualState } from '../../../../agent/reconcile/diff.ts';
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

void describe('planReconcile: adopting what flanneld programmed', () => {
  const hg: DesiredState = { routes: [{ dst: '10.244.2.0/24', gw: '192.0.2.12', dev: 'uplink', onlink: false }], neighs: [], fdbs: [], skipped: [] };
  const flannelHg = route({ gw: '192.0.2.12', oif: 2, onlink: false, protocol: RTPROT_BOOT });

  it('host-gw: a proto boot route equal to the desired one is replaced under our protocol, named once', () => {
    const p = planReconcile(hg, { routes: [flannelHg], neighs: [], fdbs: [] }, { uplink: 2 }, NET);
    assert.deepEqual(p.ops, [{ kind: 'add-route', want: hg.routes[0], replace: true, adopt: true }]);
    assert.deepEqual(p.adopted, [{ dst: '10.244.2.0/24', gw: '192.0.2.12', protocol: RTPROT_BOOT }]);
    assert.deepEqual(p.conflicts, []);
  });

  it('vxlan: flanneld\'s onlink route via the remote VTEP on flannel.1 is adopted', () => {
    const p = planReconcile(want, { ...healthy, routes: [route({ protocol: RTPROT_BOOT })] }, dev, NET);
    assert.deepEqual(p.ops.map((o) => [o.kind, o.kind === 'add-route' && o.adopt]), [['add-route', true]]);
    assert.equal(p.inPlace, 2);
  });

  it('once adopted it is ours: the next pass finds it in place, a vanished lease withdraws it', () => {
    const mine = route({ gw: '192.0.2.12', oif: 2, onlink: false });
    assert.equal(planReconcile(hg, { routes: [mine], neighs: [], fdbs: [] }, { uplink: 2 }, NET).inPlace, 1);
    const gone = planReconcile({ ...hg, routes: [] }, { routes: [mine], neighs: [], fdbs: [] }, { uplink: 2 }, NET);
    assert.deepEqual(gone.ops.map((o) => o.kind), ['del-route']);
  });

  it('a proto boot route that differs from the lease (moved peer, other device, onlink) stays a conflict', () => {
    for (const r of [
      route({ gw: '192.0.2.99', oif: 2, onlink: false, protocol: RTPROT_BOOT }),
      route({ gw: '192.0.2.12', oif: 7, onlink: false, protocol: RTPROT_BOOT }),
      route({ gw: '192.0.2.12', oif: 2, onlink: true, protocol: RTPROT_BOOT }),
    ]) {
      const p = planReconcile(hg, { routes: [r], neighs: [], fdbs: [] }, { uplink: 2 }, NET);
      assert.deepEqual(p.ops, [], JSON.stringify(r));
      assert.deepEqual(p.adopted, []);
      assert.deepEqual(p.conflicts, [{ dst: '10.244.2.0/24', protocol: RTPROT_BOOT }]);
    }
  });

  it('routes of other owners are never adopted, even when equal to the desired one', () => {
    for (const protocol of [2, 4, 16, 186]) {
      const p = planReconcile(hg, { routes: [{ ...flannelHg, protocol }], neighs: [], fdbs: [] }, { uplink: 2 }, NET);
      assert.deepEqual(p.ops, [], `protocol ${protocol}`);
      assert.deepEqual(p.conflicts, [{ dst: '10.244.2.0/24', protocol }]);
    }
  });

  it('a metric, another table, or a second foreign route for the same prefix: never adopted', () => {
    // A metric or another table makes it a different route: ours is added beside it.
    const withMetric = planReconcile(hg, { routes: [{ ...flannelHg, priority: 100 }], neighs: [], fdbs: [] }, { uplink: 2 }, NET);
    assert.deepEqual(withMetric.ops.map((o) => [o.kind, o.kind === 'add-route' && o.adopt === true]), [['add-route', false]]);
    assert.deepEqual(withMetric.adopted, []);
    const otherTable = planReconcile(hg, { routes: [{ ...flannelHg, table: 100 }], neighs: [], fdbs: [] }, { uplink: 2 }, NET);
    assert.deepEqual(otherTable.ops.map((o) => [o.kind, o.kind === 'add-route' && o.adopt === true]), [['add-route', false]]);
    const two = planReconcile(hg, { routes: [flannelHg, route({ gw: '192.0.2.1', oif: 2, onlink: false, protocol: 4 })], neighs: [], fdbs: [] }, { uplink: 2 }, NET);
    assert.deepEqual(two.ops, []);
    assert.equal(two.conflicts.length, 1);
  });

  it('IPv6: flanneld\'s route carries the default metric 1024 and is adopted', () => {
    const h6: DesiredState = { routes: [{ dst: 'fd00:10:244:2::/64', gw: 'fd00::12', dev: 'uplink', onlink: false }], neighs: [], fdbs: [], skipped: [] };
    const r6 = route({ family: 6, dst: 'fd00:10:244:2::/64', gw: 'fd00::12', oif: 2, onlink: false, protocol: RTPROT_BOOT, priority: 1024 });
    const p = planReconcile(h6, { routes: [r6], neighs: [], fdbs: [] }, { uplink: 2 }, 'fd00:10:244::/48');
    assert.deepEqual(p.adopted.map((a) => a.dst), ['fd00:10:244:2::/64']);
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { reconcileFamilySlices, reconcileJoined, type FamilyTarget } from '../../../../agent/reconcile/family.ts';
import { TouchedPeers } from '../../../../agent/reconcile/touched.ts';
import type { Lease } from '../../../../agent/lease/store.ts';
import { NetlinkError, type Fdb, type Neigh, type Route, type Rtnl } from '../../../../lib/netlink/index.ts';

const VTEP = 5;
const UPLINK = 2;

/** The part of Rtnl a family pass uses, over in-memory tables (EEXIST/ENOENT as the kernel answers). */
class FakeKernel {
  routes: Route[] = [];
  neighs: Neigh[] = [];
  fdbs: Fdb[] = [];
  dumps: string[] = [];
  listRoutes(): Route[] { this.dumps.push('routes'); return this.routes.map((r) => ({ ...r })); }
  listNeigh(): Neigh[] { this.dumps.push('neighs'); return this.neighs.map((n) => ({ ...n })); }
  listFdb(): Fdb[] { this.dumps.push('fdbs'); return this.fdbs.map((f) => ({ ...f })); }
  addRoute(r: { dst: string; gw?: string; oif?: number; onlink?: boolean; protocol?: number; replace?: boolean }): void {
    const i = this.routes.findIndex((x) => x.dst === r.dst);
    if (i >= 0 && r.replace !== true) throw new NetlinkError('addRoute', 17);
    const route: Route = { family: 4, dst: r.dst, onlink: r.onlink === true, scope: 0, table: 254, protocol: r.protocol ?? 3, type: 1, flags: 0, extra: [], ...(r.gw !== undefined ? { gw: r.gw } : {}), ...(r.oif !== undefined ? { oif: r.oif } : {}) };
    if (i >= 0) this.routes[i] = route;
    else this.routes.push(route);
  }
  delRoute(r: { dst: string }): void {
    const i = this.routes.findIndex((x) => x.dst === r.dst);
    if (i < 0) throw new NetlinkError('delRoute', 3);
    this.routes.splice(i, 1);
  }
  addNeigh(o: { index: number; ip: string; mac: string }): void {
    this.neighs = [...this.neighs.filter((n) => n.ip !== o.ip), { family: 4, index: o.index, ip: o.ip, mac: o.mac, state: 0x80, permanent: true, flags: 0, extra: [] }];
  }
  delNeigh(o: { ip: string }): void { this.neighs = this.neighs.filter((n) => n.ip !== o.ip); }
  addFdb(o: { index: number; mac: string; dst?: string }): void {
    this.fdbs = [...this.fdbs.filter((f) => f.mac !== o.mac), { index: o.index, mac: o.mac, state: 0x80, permanent: true, flags: 2, self: true, extra: [], ...(o.dst !== undefined ? { dst: o.dst } : {}) }];
  }
  delFdb(o: { mac: string }): void { this.fdbs = this.fdbs.filter((f) => f.mac !== o.mac); }
}

const peer = (n: number): Lease => ({ subnet: `10.244.${n}.0/24`, publicIp: `192.0.2.${n}`, backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: `0e:00:00:00:00:0${n}` }, expiration: 0 });
const t: FamilyTarget = { family: 4, network: '10.244.0.0/16', ownSubnet: '10.244.1.0/24', publicIp: '192.0.2.1', uplinkCidr: '192.0.2.1/24' };
const base = { backend: 'vxlan' as const, directRouting: false, vni: 1 };
const dev = { uplink: UPLINK, vtep: VTEP };

/** A full pass over peer 2, with peer 3 joining (programmed, and touched unless `untouched`) after the route dump. */
function passWithJoin(untouched = false): { k: FakeKernel; slices: number; ops: string[] } {
  const k = new FakeKernel();
  const rtnl = k as unknown as Rtnl;
  reconcileJoined(rtnl, t, base, [peer(2)], dev);
  const touched = new TouchedPeers();
  const g = reconcileFamilySlices(rtnl, t, base, [peer(2)], dev, touched);
  let slices = 0;
  for (;;) {
    const r = g.next();
    slices++;
    if (r.done === true) return { k, slices, ops: r.value.plan.ops.map((o) => o.kind) };
    if (k.dumps.at(-1) === 'routes' && k.routes.length === 1) {
      reconcileJoined(rtnl, t, base, [peer(3)], dev);
      if (!untouched) touched.add(peer(3));
    }
  }
}

void describe('reconcileFamilySlices', () => {
  it('yields between the desired state and each dump, so the event loop gets a turn after each', () => {
    assert.equal(passWithJoin().slices, 5);
  });

  it('a peer that joins between the slices keeps its neighbour, FDB entry and route (no operation on it)', () => {
    const { k, ops } = passWithJoin();
    assert.deepEqual(ops, []);
    assert.deepEqual(k.routes.map((r) => r.dst).sort(), ['10.244.2.0/24', '10.244.3.0/24']);
    assert.deepEqual(k.neighs.map((n) => n.ip).sort(), ['10.244.2.0', '10.244.3.0']);
    assert.deepEqual(k.fdbs.map((f) => f.mac).sort(), ['0e:00:00:00:00:02', '0e:00:00:00:00:03']);
  });

  it('without the touched record the same pass would remove the joined peer\'s neighbour and FDB entry (what it guards)', () => {
    const { k, ops } = passWithJoin(true);
    assert.deepEqual(ops, ['del-fdb', 'del-neigh']);
    assert.deepEqual(k.neighs.map((n) => n.ip), ['10.244.2.0']);
  });

  it('an untouched pass still removes a departed peer and re-adds a missing entry', () => {
    const k = new FakeKernel();
    const rtnl = k as unknown as Rtnl;
    reconcileJoined(rtnl, t, base, [peer(2), peer(3)], dev);
    k.neighs = k.neighs.filter((n) => n.ip !== '10.244.2.0');
    const g = reconcileFamilySlices(rtnl, t, base, [peer(2)], dev, new TouchedPeers());
    let r = g.next();
    while (r.done !== true) r = g.next();
    assert.deepEqual(r.value.out.applied.map((o) => o.kind).sort(), ['add-neigh', 'del-fdb', 'del-neigh', 'del-route']);
    assert.deepEqual(k.routes.map((x) => x.dst), ['10.244.2.0/24']);
  });
});

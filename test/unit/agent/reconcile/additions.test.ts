import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { planAdditions } from '../../../../agent/reconcile/additions.ts';
import { desiredState } from '../../../../agent/reconcile/desired.ts';
import type { Lease } from '../../../../agent/lease/store.ts';

const input = { backend: 'vxlan' as const, ownSubnet: '10.244.1.0/24', publicIp: '192.0.2.11', uplinkCidr: '192.0.2.11/24', directRouting: false, vni: 1 };
const peer = (i: number): Lease => ({
  subnet: `10.244.${i}.0/24`, publicIp: `192.0.2.${10 + i}`, backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: `0a:00:00:00:00:${String(i).padStart(2, '0')}` }, expiration: 0,
});

void describe('planAdditions', () => {
  it('every neighbour, then every FDB entry, then every route of the joined peers; routes never replace', () => {
    const plan = planAdditions(desiredState(input, [peer(3), peer(2)]));
    assert.deepEqual(plan.ops.map((o) => o.kind), ['add-neigh', 'add-neigh', 'add-fdb', 'add-fdb', 'add-route', 'add-route']);
    assert.ok(plan.ops.every((o) => o.kind !== 'add-route' || !o.replace));
    const r = plan.ops[4];
    assert.deepEqual(r?.kind === 'add-route' ? r.want : undefined, { dst: '10.244.2.0/24', gw: '10.244.2.0', dev: 'vtep', onlink: true });
    assert.deepEqual(plan.conflicts, []);
    assert.equal(plan.inPlace, 0);
  });

  it('our own lease and leases that cannot be programmed add nothing', () => {
    const own = { ...peer(1), publicIp: '192.0.2.11' };
    const wrong = { ...peer(4), backendType: 'host-gw' };
    assert.deepEqual(planAdditions(desiredState(input, [own, wrong])).ops, []);
  });

  it('host-gw: one route via the peer on the uplink, nothing on a VTEP', () => {
    const hg = { ...peer(5), backendType: 'host-gw', backendData: {} };
    const plan = planAdditions(desiredState({ ...input, backend: 'host-gw' }, [hg]));
    assert.deepEqual(plan.ops, [{ kind: 'add-route', want: { dst: '10.244.5.0/24', gw: '192.0.2.15', dev: 'uplink', onlink: false }, replace: false }]);
  });
});

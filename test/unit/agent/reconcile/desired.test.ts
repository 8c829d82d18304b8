import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { desiredState, type DesiredInput } from '../../../../agent/reconcile/desired.ts';
import type { Lease } from '../../../../agent/lease/store.ts';

const base: DesiredInput = { backend: 'vxlan', ownSubnet: '10.244.1.0/24', publicIp: '192.0.2.11', uplinkCidr: '192.0.2.11/24', directRouting: false, vni: 1 };
const lease = (subnet: string, publicIp: string, extra: Partial<Lease> = {}): Lease =>
  ({ subnet, publicIp, backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: '0E:00:00:00:00:02' }, expiration: 0, ...extra });

void describe('desiredState', () => {
  it('vxlan: neighbour, FDB and onlink route per remote lease; own lease skipped', () => {
    const d = desiredState(base, [lease('10.244.2.0/24', '192.0.2.12'), lease('10.244.1.0/24', '192.0.2.11')]);
    assert.deepEqual(d.neighs, [{ ip: '10.244.2.0', mac: '0e:00:00:00:00:02' }]);
    assert.deepEqual(d.fdbs, [{ mac: '0e:00:00:00:00:02', dst: '192.0.2.12' }]);
    assert.deepEqual(d.routes, [{ dst: '10.244.2.0/24', gw: '10.244.2.0', dev: 'vtep', onlink: true }]);
    assert.deepEqual(d.skipped, []);
  });

  it('vxlan DirectRouting: a plain route via the node for peers on the uplink subnet only', () => {
    const d = desiredState({ ...base, directRouting: true }, [lease('10.244.2.0/24', '192.0.2.12'), lease('10.244.3.0/24', '198.51.100.7')]);
    assert.deepEqual(d.routes, [
      { dst: '10.244.2.0/24', gw: '192.0.2.12', dev: 'uplink', onlink: false },
      { dst: '10.244.3.0/24', gw: '10.244.3.0', dev: 'vtep', onlink: true },
    ]);
    assert.equal(d.neighs.length, 1);
  });

  it('host-gw: a route via the peer; peers off the uplink subnet are skipped with a reason', () => {
    const hg = { ...base, backend: 'host-gw' as const };
    const d = desiredState(hg, [lease('10.244.2.0/24', '192.0.2.12', { backendType: 'host-gw', backendData: {} }), lease('10.244.3.0/24', '198.51.100.7', { backendType: 'host-gw', backendData: {} })]);
    assert.deepEqual(d.routes, [{ dst: '10.244.2.0/24', gw: '192.0.2.12', dev: 'uplink', onlink: false }]);
    assert.equal(d.skipped.length, 1);
    assert.match(d.skipped[0]?.reason ?? '', /not on the uplink/);
  });

  it('skips leases of another backend, a bad VtepMAC or another VNI', () => {
    const d = desiredState(base, [
      lease('10.244.2.0/24', '192.0.2.12', { backendType: 'host-gw' }),
      lease('10.244.3.0/24', '192.0.2.13', { backendData: { VNI: 1, VtepMAC: 'nope' } }),
      lease('10.244.4.0/24', '192.0.2.14', { backendData: { VNI: 7, VtepMAC: '0e:00:00:00:00:04' } }),
    ]);
    assert.equal(d.routes.length, 0);
    assert.deepEqual(d.skipped.map((s) => s.subnet), ['10.244.2.0/24', '10.244.3.0/24', '10.244.4.0/24']);
  });

  it('is ordered by subnet whatever the input order', () => {
    const a = desiredState(base, [lease('10.244.9.0/24', '192.0.2.19'), lease('10.244.2.0/24', '192.0.2.12')]);
    assert.deepEqual(a.routes.map((r) => r.dst), ['10.244.2.0/24', '10.244.9.0/24']);
  });
});

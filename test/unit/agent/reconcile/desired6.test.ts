import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { desiredState, type DesiredInput } from '../../../../agent/reconcile/desired.ts';
import type { Lease } from '../../../../agent/lease/store.ts';

const v6: DesiredInput = {
  backend: 'vxlan', family: 6, ownSubnet: 'fd00:10:244:1::/64', publicIp: '2001:db8:2::11', uplinkCidr: '2001:db8:2::11/64', directRouting: false, vni: 1,
};
const dual = (n: number, extra: Partial<Lease> = {}): Lease => ({
  subnet: `10.244.${n}.0/24`, publicIp: `192.0.2.${10 + n}`, backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: `0e:00:00:00:04:0${n}` }, expiration: 0,
  ipv6Subnet: `fd00:10:244:${n}::/64`, publicIpv6: `2001:db8:2::${10 + n}`, backendV6Data: { VNI: 1, VtepMAC: `0E:00:00:00:06:0${n}` }, ...extra,
});

void describe('desiredState, IPv6 side', () => {
  it('vxlan: neighbour, FDB and onlink route from IPv6Subnet, PublicIPv6 and BackendV6Data; own lease skipped', () => {
    const d = desiredState(v6, [dual(2), dual(1)]);
    assert.deepEqual(d.neighs, [{ ip: 'fd00:10:244:2::', mac: '0e:00:00:00:06:02' }]);
    assert.deepEqual(d.fdbs, [{ mac: '0e:00:00:00:06:02', dst: '2001:db8:2::12' }]);
    assert.deepEqual(d.routes, [{ dst: 'fd00:10:244:2::/64', gw: 'fd00:10:244:2::', dev: 'vtep', onlink: true }]);
    assert.deepEqual(d.skipped, []);
  });

  it('the IPv4 side of the same leases uses the IPv4 fields only', () => {
    const d = desiredState({ ...v6, family: 4, ownSubnet: '10.244.1.0/24', publicIp: '192.0.2.11', uplinkCidr: '192.0.2.11/24' }, [dual(2), dual(1)]);
    assert.deepEqual(d.fdbs, [{ mac: '0e:00:00:00:04:02', dst: '192.0.2.12' }]);
    assert.deepEqual(d.routes, [{ dst: '10.244.2.0/24', gw: '10.244.2.0', dev: 'vtep', onlink: true }]);
  });

  it('canonicalises the text forms the kernel reports back (leading zeros, upper case)', () => {
    const d = desiredState(v6, [dual(2, { ipv6Subnet: 'FD00:10:244:2:0:0:0:0/64', publicIpv6: '2001:0db8:0002::0012' })]);
    assert.deepEqual(d.routes, [{ dst: 'fd00:10:244:2::/64', gw: 'fd00:10:244:2::', dev: 'vtep', onlink: true }]);
    assert.deepEqual(d.fdbs, [{ mac: '0e:00:00:00:06:02', dst: '2001:db8:2::12' }]);
  });

  it('an IPv4-only lease has no IPv6 side: skipped with a reason, nothing programmed', () => {
    const d = desiredState(v6, [{ subnet: '10.244.3.0/24', publicIp: '192.0.2.13', backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: '0e:00:00:00:04:03' }, expiration: 0 }]);
    assert.equal(d.routes.length + d.neighs.length + d.fdbs.length, 0);
    assert.deepEqual(d.skipped, [{ subnet: '10.244.3.0/24', reason: 'no IPv6 subnet in the lease' }]);
  });

  it('skips a missing BackendV6Data MAC, an IPv4 PublicIPv6 and another VNI', () => {
    const d = desiredState(v6, [
      dual(2, { backendV6Data: {} }),
      dual(3, { publicIpv6: '192.0.2.13' }),
      dual(4, { backendV6Data: { VNI: 9, VtepMAC: '0e:00:00:00:06:04' } }),
    ]);
    assert.equal(d.routes.length, 0);
    assert.deepEqual(d.skipped.map((s) => s.reason), ['VtepMAC undefined is not a MAC', 'not an IPv6 lease', 'VNI 9 differs from ours (1)']);
  });

  it('a lease with our PublicIPv6 under another subnet is ours: skipped silently', () => {
    const d = desiredState(v6, [dual(5, { publicIpv6: '2001:db8:2::11' })]);
    assert.deepEqual(d, { routes: [], neighs: [], fdbs: [], skipped: [] });
  });

  it('host-gw: a route to the IPv6 subnet via PublicIPv6 on the uplink; peers off the uplink prefix skipped', () => {
    const hg: DesiredInput = { ...v6, backend: 'host-gw' };
    const d = desiredState(hg, [dual(2, { backendType: 'host-gw' }), dual(3, { backendType: 'host-gw', publicIpv6: '2001:db8:99::13' })]);
    assert.deepEqual(d.routes, [{ dst: 'fd00:10:244:2::/64', gw: '2001:db8:2::12', dev: 'uplink', onlink: false }]);
    assert.equal(d.skipped.length, 1);
    assert.match(d.skipped[0]?.reason ?? '', /2001:db8:99::13 is not on the uplink/);
  });

  it('DirectRouting: a plain IPv6 route via PublicIPv6 for peers on the uplink prefix', () => {
    const d = desiredState({ ...v6, directRouting: true }, [dual(2)]);
    assert.deepEqual(d.routes, [{ dst: 'fd00:10:244:2::/64', gw: '2001:db8:2::12', dev: 'uplink', onlink: false }]);
    assert.equal(d.neighs.length, 0);
  });
});

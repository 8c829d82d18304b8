import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { familyTargets } from '../../../../agent/reconcile/family.ts';
import type { Lease } from '../../../../agent/lease/store.ts';

const own: Lease = { subnet: '10.244.1.0/24', publicIp: '192.0.2.11', backendType: 'vxlan', backendData: {}, expiration: 0 };
const up4 = { publicIp: '192.0.2.11', cidr: '192.0.2.11/24' };
const up6 = { publicIp: '2001:db8:2::11', cidr: '2001:db8:2::11/64' };

void describe('familyTargets', () => {
  it('IPv4 only: one target with the IPv4 side', () => {
    assert.deepEqual(familyTargets({ network: '10.244.0.0/16' }, own, up4, undefined), [
      { family: 4, network: '10.244.0.0/16', ownSubnet: '10.244.1.0/24', publicIp: '192.0.2.11', uplinkCidr: '192.0.2.11/24' },
    ]);
  });

  it('dual stack: IPv4 then IPv6, the IPv6 one from IPv6Network, the lease IPv6 subnet and the uplink IPv6 side', () => {
    const t = familyTargets({ network: '10.244.0.0/16', ipv6Network: 'fd00:10:244::/56' }, { ...own, ipv6Subnet: 'fd00:10:244:1::/64' }, up4, up6);
    assert.deepEqual(t.map((x) => x.family), [4, 6]);
    assert.deepEqual(t[1], { family: 6, network: 'fd00:10:244::/56', ownSubnet: 'fd00:10:244:1::/64', publicIp: '2001:db8:2::11', uplinkCidr: '2001:db8:2::11/64' });
  });

  it('no IPv6 target while any IPv6 piece is missing (lease subnet, network or uplink side)', () => {
    const conf = { network: '10.244.0.0/16', ipv6Network: 'fd00:10:244::/56' };
    assert.equal(familyTargets(conf, own, up4, up6).length, 1);
    assert.equal(familyTargets({ network: '10.244.0.0/16' }, { ...own, ipv6Subnet: 'fd00:10:244:1::/64' }, up4, up6).length, 1);
    assert.equal(familyTargets(conf, { ...own, ipv6Subnet: 'fd00:10:244:1::/64' }, up4, undefined).length, 1);
  });

  it('an empty Network (IPv6-only net-conf) has no IPv4 target', () => {
    assert.deepEqual(familyTargets({ network: '', ipv6Network: 'fd00:10:244::/56' }, { ...own, ipv6Subnet: 'fd00:10:244:1::/64' }, up4, up6).map((x) => x.family), [6]);
  });
});

// Dual-stack allocation: IPv6SubnetMin/Max, flannel's 100-candidate window, exhaustion, and the
// preference order on both families (flannel's LocalManager.tryAcquireLease / allocateSubnet).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeNetConf } from '../../../../agent/config/net-conf.ts';
import { checkAcquireFamilies, freeSubnets, isSubnetCompatible, leaseFromPlan, pickFreeSubnet, planAcquire } from '../../../../agent/lease/allocate.ts';
import { type AcquireOptions, type Lease, OutOfSubnetsError } from '../../../../agent/lease/store.ts';

const conf = normalizeNetConf({ Network: '10.244.0.0/16', EnableIPv6: true, IPv6Network: 'fd00:10:244::/56', Backend: { Type: 'vxlan' } });
const v4conf = normalizeNetConf({ Network: '10.244.0.0/16', Backend: { Type: 'vxlan' } });
const live = (l: Lease) => l.expiration > Date.now();
const lease = (subnet: string, ipv6Subnet: string | undefined, publicIp: string, expiration = Date.now() + 60_000): Lease =>
  ({ subnet, ...(ipv6Subnet !== undefined ? { ipv6Subnet, publicIpv6: 'fd00::9' } : {}), publicIp, backendType: 'vxlan', backendData: { VNI: 1 }, expiration });
const opts = (o: Partial<AcquireOptions> = {}): AcquireOptions =>
  ({ publicIp: '192.168.1.1', publicIpv6: 'fd00::1', backendType: 'vxlan', backendData: { VNI: 1 }, backendV6Data: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:01' }, ...o });

void describe('allocate IPv6', () => {
  void it('never offers the first IPv6 subnet and stops at IPv6SubnetMax', () => {
    const free = freeSubnets(conf, 6, [], 1000);
    assert.equal(free.length, 255);
    assert.equal(free[0], 'fd00:10:244:1::/64');
    assert.equal(free[254], 'fd00:10:244:ff::/64');
    assert.equal(freeSubnets(conf, 6, []).length, 100);
  });

  void it('honours IPv6SubnetMin/Max and skips overlapping subnets of any size', () => {
    const c = normalizeNetConf({ Network: '10.1.0.0/16', EnableIPv6: true, IPv6Network: 'fd00::/48', IPv6SubnetMin: 'fd00:0:0:10::', IPv6SubnetMax: 'fd00:0:0:17::' });
    const free = freeSubnets(c, 6, ['fd00:0:0:11::/64', 'fd00:0:0:12::/63', 'fd00:0:0:10::/63', 'fd00::/60', 'garbage', '10.1.2.0/24']);
    assert.deepEqual(free, ['fd00:0:0:14::/64', 'fd00:0:0:15::/64', 'fd00:0:0:16::/64', 'fd00:0:0:17::/64']);
    assert.ok(isSubnetCompatible(c, 6, 'fd00:0:0:10::/64'));
    assert.ok(!isSubnetCompatible(c, 6, 'fd00:0:0:f::/64'));
    assert.ok(!isSubnetCompatible(c, 6, 'fd00:0:0:18::/64'));
    assert.ok(!isSubnetCompatible(c, 6, 'fd00:0:0:10::/65'));
    assert.ok(!isSubnetCompatible(v4conf, 6, 'fd00:0:0:10::/64'));
  });

  void it('exhausts: every IPv6 subnet handed out once, then null', () => {
    const small = normalizeNetConf({ Network: '10.9.0.0/16', EnableIPv6: true, IPv6Network: 'fd00::/120', IPv6SubnetLen: 124 });
    const taken: string[] = [];
    for (let s = pickFreeSubnet(small, 6, taken); s !== null; s = pickFreeSubnet(small, 6, taken)) {
      assert.ok(!taken.includes(s), `duplicate ${s}`);
      taken.push(s);
    }
    assert.equal(taken.length, 15);
    assert.ok(!taken.includes('fd00::/124'));
  });

  void it('plans a fresh dual-stack lease from both ranges', () => {
    const p = planAcquire(conf, [lease('10.244.1.0/24', 'fd00:10:244:1::/64', '192.168.1.2')], opts(), live, () => 0);
    assert.deepEqual(p, { subnet: '10.244.2.0/24', ipv6Subnet: 'fd00:10:244:2::/64', existing: undefined, stale: [] });
    const l = leaseFromPlan(p!, opts(), 5);
    assert.deepEqual(l, { subnet: '10.244.2.0/24', ipv6Subnet: 'fd00:10:244:2::/64', publicIp: '192.168.1.1', publicIpv6: 'fd00::1', backendType: 'vxlan', backendData: { VNI: 1 }, backendV6Data: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:01' }, expiration: 5 });
    // IPv4-only config: the IPv6 options are ignored, the lease stays IPv4-only.
    const p4 = planAcquire(v4conf, [], opts(), live, () => 0);
    assert.deepEqual(leaseFromPlan(p4!, opts(), 5), { subnet: '10.244.1.0/24', publicIp: '192.168.1.1', backendType: 'vxlan', backendData: { VNI: 1 }, expiration: 5 });
  });

  void it('takes back its own lease only when both families fit; keeps the IPv4 subnet when only IPv6 changed', () => {
    const mine = lease('10.244.7.0/24', 'fd00:10:244:7::/64', '192.168.1.1');
    let p = planAcquire(conf, [mine], opts({ preferredSubnet: '10.244.9.0/24' }), live);
    assert.equal(p?.subnet, '10.244.7.0/24');
    assert.equal(p?.ipv6Subnet, 'fd00:10:244:7::/64');
    assert.equal(p?.existing, mine);
    // IPv6 just enabled: the own IPv4-only lease goes, its IPv4 subnet is kept under the new key.
    const old = lease('10.244.7.0/24', undefined, '192.168.1.1');
    p = planAcquire(conf, [old], opts(), live, () => 0);
    assert.equal(p?.subnet, '10.244.7.0/24');
    assert.equal(p?.ipv6Subnet, 'fd00:10:244:1::/64');
    assert.deepEqual(p?.stale, [old]);
    assert.equal(p?.existing, undefined);
    // IPv6 disabled again: the dual-stack lease does not fit an IPv4-only config (flannel's isIPv6SubnetConfigCompat).
    p = planAcquire(v4conf, [mine], opts(), live);
    assert.equal(p?.subnet, '10.244.7.0/24');
    assert.equal(p?.ipv6Subnet, undefined);
    assert.deepEqual(p?.stale, [mine]);
    // An IPv6 subnet outside IPv6SubnetMin..Max makes the lease stale as well.
    const out = lease('10.244.7.0/24', 'fd00:10:244::/64', '192.168.1.1');
    p = planAcquire(conf, [out], opts(), live, () => 0);
    assert.deepEqual(p?.stale, [out]);
  });

  void it('uses the preferred IPv6 subnet (from subnet.env) when free, else a free one', () => {
    const other = lease('10.244.5.0/24', 'fd00:10:244:5::/64', '192.168.1.2');
    let p = planAcquire(conf, [other], opts({ preferredSubnet: '10.244.8.0/24', preferredIpv6Subnet: 'fd00:10:244:8::/64' }), live);
    assert.equal(p?.subnet, '10.244.8.0/24');
    assert.equal(p?.ipv6Subnet, 'fd00:10:244:8::/64');
    p = planAcquire(conf, [other], opts({ preferredSubnet: '10.244.8.0/24', preferredIpv6Subnet: 'fd00:10:244:5::/64' }), live, () => 0);
    assert.equal(p?.subnet, '10.244.8.0/24');
    assert.equal(p?.ipv6Subnet, 'fd00:10:244:1::/64');
    p = planAcquire(conf, [other], opts({ preferredIpv6Subnet: 'fd00:10:244:0::/64' }), live, () => 0);
    assert.equal(p?.ipv6Subnet, 'fd00:10:244:1::/64'); // the first subnet is outside the range
  });

  void it('replaces a dead lease on the chosen IPv4 subnet: overwritten under the same key, else deleted', () => {
    const dead = lease('10.244.6.0/24', 'fd00:10:244:6::/64', '192.168.1.3', 1);
    let p = planAcquire(conf, [dead], opts({ preferredSubnet: '10.244.6.0/24', preferredIpv6Subnet: 'fd00:10:244:6::/64' }), live);
    assert.equal(p?.existing, dead);
    assert.deepEqual(p?.stale, []);
    p = planAcquire(conf, [dead], opts({ preferredSubnet: '10.244.6.0/24', preferredIpv6Subnet: 'fd00:10:244:9::/64' }), live);
    assert.equal(p?.ipv6Subnet, 'fd00:10:244:9::/64');
    assert.equal(p?.existing, undefined);
    assert.deepEqual(p?.stale, [dead]);
  });

  void it('returns null when the IPv6 range is full', () => {
    const tiny = normalizeNetConf({ Network: '10.9.0.0/16', EnableIPv6: true, IPv6Network: 'fd00::/124' });
    const taken = ['fd00::4/126', 'fd00::8/126', 'fd00::c/126'].map((s, i) => lease(`10.9.${i + 1}.0/24`, s, `192.168.1.${i + 10}`));
    assert.equal(planAcquire(tiny, taken, opts(), live), null);
  });

  void it('refuses IPv6 without an IPv6 address, naming the key', () => {
    const v6only = normalizeNetConf({ EnableIPv4: false, EnableIPv6: true, IPv6Network: 'fd00::/48' });
    assert.doesNotThrow(() => checkAcquireFamilies(v6only, opts()));
    assert.throws(() => checkAcquireFamilies(v6only, opts({ publicIpv6: '' })), /EnableIPv6 needs the node's IPv6 address/);
    assert.throws(() => checkAcquireFamilies(conf, opts({ publicIpv6: '' })), /EnableIPv6 needs the node's IPv6 address/);
    assert.doesNotThrow(() => checkAcquireFamilies(conf, opts()));
    assert.doesNotThrow(() => checkAcquireFamilies(v4conf, opts({ publicIpv6: '' })));
  });
});

void describe('allocate IPv6-only (EnableIPv4 false)', () => {
  const v6only = normalizeNetConf({ EnableIPv4: false, EnableIPv6: true, IPv6Network: 'fd00:10:244::/56', Backend: { Type: 'vxlan' } });
  const v6lease = (ipv6Subnet: string, publicIpv6: string, expiration = Date.now() + 60_000): Lease =>
    ({ subnet: '0.0.0.0/0', ipv6Subnet, publicIp: '0.0.0.0', publicIpv6, backendType: 'vxlan', backendData: {}, backendV6Data: { VNI: 1 }, expiration });

  void it('leases an IPv6 subnet with flannel\'s zero IPv4 side (key 0.0.0.0-0&...), PublicIP 0.0.0.0', () => {
    const p = planAcquire(v6only, [], opts(), live, () => 0);
    assert.deepEqual(p, { subnet: '0.0.0.0/0', ipv6Subnet: 'fd00:10:244:1::/64', existing: undefined, stale: [] });
    const l = leaseFromPlan(p, opts(), 5);
    assert.deepEqual([l.subnet, l.publicIp, l.ipv6Subnet, l.publicIpv6], ['0.0.0.0/0', '0.0.0.0', 'fd00:10:244:1::/64', 'fd00::1']);
  });

  void it('several IPv6-only nodes get distinct subnets; its own lease is found by PublicIPv6 (every PublicIP is 0.0.0.0)', () => {
    const others = [v6lease('fd00:10:244:1::/64', 'fd00::2'), v6lease('fd00:10:244:2::/64', 'fd00::3')];
    const p = planAcquire(v6only, others, opts(), live, () => 0);
    assert.equal(p?.ipv6Subnet, 'fd00:10:244:3::/64');
    const mine = v6lease('fd00:10:244:7::/64', 'fd00::1');
    const again = planAcquire(v6only, [...others, mine], opts(), live, () => 0);
    assert.deepEqual([again?.ipv6Subnet, again?.existing], ['fd00:10:244:7::/64', mine]);
  });

  void it('takes the remembered subnet when free, not when a live node holds it; overwrites a dead lease of it', () => {
    const held = v6lease('fd00:10:244:5::/64', 'fd00::2');
    assert.equal(planAcquire(v6only, [], opts({ preferredIpv6Subnet: 'fd00:10:244:5::/64' }), live)?.ipv6Subnet, 'fd00:10:244:5::/64');
    assert.notEqual(planAcquire(v6only, [held], opts({ preferredIpv6Subnet: 'fd00:10:244:5::/64' }), live, () => 0)?.ipv6Subnet, 'fd00:10:244:5::/64');
    const dead = v6lease('fd00:10:244:5::/64', 'fd00::2', Date.now() - 1);
    assert.deepEqual(planAcquire(v6only, [dead], opts({ preferredIpv6Subnet: 'fd00:10:244:5::/64' }), live)?.existing, dead);
  });

  void it('returns null when full, and says which range', () => {
    const tiny = normalizeNetConf({ EnableIPv4: false, EnableIPv6: true, IPv6Network: 'fd00::/124' });
    const taken = ['fd00::4/126', 'fd00::8/126', 'fd00::c/126'].map((s, i) => v6lease(s, `fd00:1::${i + 10}`));
    assert.equal(planAcquire(tiny, taken, opts(), live), null);
    assert.match(new OutOfSubnetsError(tiny).message, /^no free \/126 IPv6 subnet left in fd00::\/124 between fd00::4 and fd00::c$/);
  });
});

void describe('OutOfSubnetsError', () => {
  void it('names the IPv6 range too when IPv6 is enabled', () => {
    assert.match(new OutOfSubnetsError(conf).message, /no free \/24 subnet left in 10\.244\.0\.0\/16 between 10\.244\.1\.0 and 10\.244\.255\.0 or no free \/64 IPv6 subnet in fd00:10:244::\/56 between fd00:10:244:1:: and fd00:10:244:ff::/);
    assert.doesNotMatch(new OutOfSubnetsError(v4conf).message, /IPv6/);
  });
});

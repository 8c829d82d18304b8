// Subnet allocation: ranges, SubnetMin/SubnetMax, exhaustion, no duplicates, flannel's preference order.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeNetConf } from '../../../../agent/config/net-conf.ts';
import { freeSubnets, isSubnetCompatible, pickFreeSubnet, planAcquire } from '../../../../agent/lease/allocate.ts';
import type { Lease } from '../../../../agent/lease/store.ts';

const conf = normalizeNetConf({ Network: '10.244.0.0/16', Backend: { Type: 'vxlan' } });
const lease = (subnet: string, publicIp: string, expiration = Date.now() + 60_000): Lease =>
  ({ subnet, publicIp, backendType: 'vxlan', backendData: { VNI: 1 }, expiration });

void describe('allocate', () => {
  void it('never offers the first subnet and stops at SubnetMax', () => {
    const free = freeSubnets(conf, 4, [], 1000);
    assert.equal(free.length, 255);
    assert.equal(free[0], '10.244.1.0/24');
    assert.equal(free[254], '10.244.255.0/24');
    assert.equal(freeSubnets(conf, 4, []).length, 100); // flannel's candidate window
  });

  void it('honours SubnetMin/SubnetMax and skips overlapping leases of any size', () => {
    const c = normalizeNetConf({ Network: '10.1.0.0/16', SubnetMin: '10.1.10.0', SubnetMax: '10.1.20.0' });
    const free = freeSubnets(c, 4, ['10.1.12.0/24', '10.1.14.0/23', '10.1.0.0/20', 'garbage']);
    assert.deepEqual(free, ['10.1.16.0/24', '10.1.17.0/24', '10.1.18.0/24', '10.1.19.0/24', '10.1.20.0/24']);
    assert.ok(isSubnetCompatible(c, 4, '10.1.10.0/24'));
    assert.ok(!isSubnetCompatible(c, 4, '10.1.9.0/24'));
    assert.ok(!isSubnetCompatible(c, 4, '10.1.21.0/24'));
    assert.ok(!isSubnetCompatible(c, 4, '10.1.10.0/25'));
  });

  void it('exhausts: every subnet handed out once, then null', () => {
    const small = normalizeNetConf({ Network: '10.9.0.0/22', SubnetLen: 26 });
    const taken: string[] = [];
    for (;;) {
      const s = pickFreeSubnet(small, 4, taken);
      if (s === null) break;
      assert.ok(!taken.includes(s), `duplicate ${s}`);
      taken.push(s);
    }
    assert.equal(taken.length, 15); // 16 /26s in a /22, minus the first
    assert.ok(!taken.includes('10.9.0.0/26'));
  });

  void it('picks at random among the candidates', () => {
    assert.equal(pickFreeSubnet(conf, 4, [], () => 0), '10.244.1.0/24');
    assert.equal(pickFreeSubnet(conf, 4, [], () => 0.999999), '10.244.100.0/24');
  });

  void it('plans: own lease first, then preferred, then free; stale own leases go', () => {
    const others = [lease('10.244.5.0/24', '192.168.1.2'), lease('10.244.6.0/24', '192.168.1.3', 1)];
    const live = (l: Lease) => l.expiration > Date.now();
    const mine = lease('10.244.7.0/24', '192.168.1.1');
    const wrongSize = lease('10.244.8.0/25', '192.168.1.1');
    let p = planAcquire(conf, [...others, mine, wrongSize], { publicIp: '192.168.1.1', backendType: 'vxlan', backendData: {}, preferredSubnet: '10.244.9.0/24' }, live);
    assert.equal(p?.subnet, '10.244.7.0/24');
    assert.deepEqual(p?.stale, [wrongSize]);
    p = planAcquire(conf, others, { publicIp: '192.168.1.1', backendType: 'vxlan', backendData: {}, preferredSubnet: '10.244.5.0/24' }, live);
    assert.notEqual(p?.subnet, '10.244.5.0/24'); // preferred but held live by another node
    p = planAcquire(conf, others, { publicIp: '192.168.1.1', backendType: 'vxlan', backendData: {}, preferredSubnet: '10.244.6.0/24' }, live);
    assert.equal(p?.subnet, '10.244.6.0/24'); // preferred and only held by an expired lease
    assert.equal(p?.existing?.publicIp, '192.168.1.3');
    p = planAcquire(conf, others, { publicIp: '192.168.1.1', backendType: 'vxlan', backendData: {} }, live, () => 0);
    assert.equal(p?.subnet, '10.244.1.0/24');
  });
});

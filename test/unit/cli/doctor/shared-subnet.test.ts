// check "ipam": two CNI networks allocating from one subnet of this node are named (host-local's
// records are per network name), with the addresses already given twice. Pure.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Allocation } from '../../../../cli/doctor/allocations.ts';
import { checkAllocations, sharedSubnetProblems } from '../../../../cli/doctor/check-allocations.ts';
import { liveAttachments } from '../../../../lib/attach/bridge-veth.ts';

const a = (network: string, ip: string, containerId: string): Allocation => ({ network, ip, containerId, ifName: 'eth0', path: `/var/lib/cni/networks/${network}/${ip}` });

test('networks cbr0 and weft on the node subnet: named, with the duplicate address', () => {
  const allocs = [a('cbr0', '10.99.5.2', 'old-pod'), a('cbr0', '10.99.5.3', 'old-pod-2'), a('weft', '10.99.5.2', 'new-pod'), a('other', '10.88.0.5', 'x')];
  const p = sharedSubnetProblems(allocs, ['10.99.5.0/24']);
  assert.equal(p.length, 1, JSON.stringify(p));
  assert.equal(p[0]?.detail, 'CNI networks "cbr0" and "weft" both allocate from 10.99.5.0/24 on this node (addresses held: cbr0: 2, weft: 1): ' +
    'host-local keeps its records per network name, so each can hand out an address the other holds; already given twice: 10.99.5.2 held under cbr0 (old-pod/eth0) and weft (new-pod/eth0)');
  assert.match(p[0]?.fix ?? '', /weft install --network-name cbr0/);
});

test('the bridge address names the subnet too (host bits dropped, one problem per subnet); one network alone is fine', () => {
  const allocs = [a('cbr0', '10.99.5.7', 'p1'), a('weft', '10.99.5.9', 'p2')];
  assert.equal(sharedSubnetProblems(allocs, ['10.99.5.1/24', '10.99.5.0/24']).length, 1);
  assert.deepEqual(sharedSubnetProblems([a('weft', '10.99.5.9', 'p2'), a('weft', '10.99.5.10', 'p3')], ['10.99.5.0/24']), []);
  assert.deepEqual(sharedSubnetProblems(allocs, []), []);
});

test('checkAllocations reports it under ipam beside leaks', () => {
  const r = checkAllocations('/var/lib/cni/networks', [a('cbr0', '10.99.5.7', 'p1'), a('weft', '10.99.5.9', 'p2')], liveAttachments([]), ['10.99.5.0/24']);
  assert.ok(r.problems.some((p) => p.check === 'ipam' && p.detail.startsWith('CNI networks "cbr0" and "weft" both allocate from 10.99.5.0/24')), JSON.stringify(r.problems));
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { desiredPolicy, type PolicyCompileCache } from '../../../../agent/policy/desired.ts';
import { readDropCounters } from '../../../../agent/policy/metrics.ts';
import { policyIsLocal, policyNodeAddrs } from '../../../../agent/policy/node.ts';
import { trimPod, trimPolicy } from '../../../../agent/policy/types.ts';
import { parseNftListing } from '../../../../lib/netfilter/parse-listing.ts';

void describe('policy node helpers', () => {
  it('node addresses: the subnet .0 (VTEP) and .1 (cni0) and the public IP', () => {
    assert.deepEqual(policyNodeAddrs('10.244.3.0/24', '192.0.2.13'), ['10.244.3.0', '10.244.3.1', '192.0.2.13']);
  });
  it('a pod is local by hostIP or by an address in the lease subnet', () => {
    const p = (ip: string, hostIP?: string) => trimPod({ metadata: { namespace: 'x', name: 'p' }, status: { podIP: ip, ...(hostIP ? { hostIP } : {}) } });
    assert.equal(policyIsLocal(p('10.9.9.9', '192.0.2.13')!, '10.244.3.0/24', '192.0.2.13'), true);
    assert.equal(policyIsLocal(p('10.244.3.7')!, '10.244.3.0/24', '192.0.2.13'), true);
    assert.equal(policyIsLocal(p('10.244.4.7', '192.0.2.14')!, '10.244.3.0/24', '192.0.2.13'), false);
  });
  it('pod addresses of both families are normalised, invalid ones dropped', () => {
    assert.deepEqual(trimPod({ metadata: { namespace: 'x', name: 'p' }, status: { podIP: '10.0.0.1', podIPs: [{ ip: '10.0.0.1' }, { ip: 'FD00:0::1' }, { ip: '::ffff:10.0.0.2' }, { ip: '999.0.0.1' }] } })?.ips, ['10.0.0.1', 'fd00::1', '10.0.0.2']);
  });
  it('dual-stack node: both subnets give gateway and VTEP addresses, and make pods local', () => {
    const v6 = { subnet: 'fd00:10:244:3::/64', publicIp: '2001:db8::13' };
    assert.deepEqual(policyNodeAddrs('10.244.3.0/24', '192.0.2.13', v6), ['10.244.3.0', '10.244.3.1', '192.0.2.13', 'fd00:10:244:3::', 'fd00:10:244:3::1', '2001:db8::13']);
    const p = trimPod({ metadata: { namespace: 'x', name: 'p' }, status: { podIPs: [{ ip: 'fd00:10:244:3::7' }] } })!;
    assert.equal(policyIsLocal(p, '10.244.3.0/24', '192.0.2.13', v6), true);
    assert.equal(policyIsLocal(p, '10.244.3.0/24', '192.0.2.13'), false);
  });
});

void describe('compile cache', () => {
  it('gives the same table as a cold compile and forgets deleted policies', () => {
    const pods = [trimPod({ metadata: { namespace: 'x', name: 'a', labels: { pod: 'a' } }, status: { podIP: '10.1.1.2', hostIP: 'h' } })!];
    const pol = (name: string) => trimPolicy({ metadata: { namespace: 'x', name }, spec: { podSelector: {}, ingress: [{ from: [{ podSelector: { matchLabels: { pod: 'a' } } }], ports: [{ port: 'http' }] }] } });
    const w = { policies: [pol('p1'), pol('p2')], pods, namespaces: new Map(), isLocal: () => true, nodeAddrs: [] };
    const cache: PolicyCompileCache = new Map();
    desiredPolicy(w, cache);
    const warm = desiredPolicy(w, cache);
    const cold = desiredPolicy(w);
    assert.deepEqual([...warm.content.chains], [...cold.content.chains]);
    assert.deepEqual([...warm.content.sets], [...cold.content.sets]);
    assert.equal(cache.size, 2);
    desiredPolicy({ ...w, policies: [pol('p1')] }, cache);
    assert.equal(cache.size, 1);
  });
});

void describe('readDropCounters', () => {
  it('reads per-policy named counters by the plans, and the totals', () => {
    const pol = trimPolicy({ metadata: { namespace: 'x', name: 'deny' }, spec: { podSelector: {}, policyTypes: ['Ingress', 'Egress'] } });
    const d = desiredPolicy({ policies: [pol], pods: [], namespaces: new Map(), isLocal: () => true, nodeAddrs: [] });
    const plan = d.plans[0]!;
    assert.ok(plan.ingressCounter !== undefined && d.content.counters?.has(plan.ingressCounter));
    const listing = JSON.stringify({ nftables: [
      { counter: { family: 'inet', table: 'weft-policy', name: plan.ingressCounter, handle: 2, packets: 7, bytes: 420 } },
      { counter: { family: 'inet', table: 'weft-policy', name: plan.egressCounter, handle: 3, packets: 1, bytes: 60 } },
      { counter: { family: 'inet', table: 'weft-policy', name: 'drops-in', handle: 4, packets: 9, bytes: 540 } },
      { counter: { family: 'inet', table: 'weft-policy', name: 'drops-eg', handle: 5, packets: 0, bytes: 0 } },
    ] });
    assert.deepEqual(readDropCounters(parseNftListing(listing).counters ?? new Map(), d.plans), [
      { policy: 'x/deny', direction: 'ingress', packets: 7 }, { policy: 'x/deny', direction: 'egress', packets: 1 },
      { policy: 'all', direction: 'ingress', packets: 9 }, { policy: 'all', direction: 'egress', packets: 0 },
    ]);
  });
});

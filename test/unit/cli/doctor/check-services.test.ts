import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseSvcListing } from '../../../../agent/services/kernel.ts';
import { checkServicesOnNode, compareServiceTable } from '../../../../cli/doctor/check-services.ts';
import { ep, port, slice, svc } from '../../agent/services/fixtures.ts';

// The objects listing.fixture.json was taken from (weftd's table after programming them on node n1).
const LB = svc('lb', { type: 'LoadBalancer', clusterIPs: ['10.96.0.20', 'fd00:96::20'], ports: [port('', 80, { nodePort: 30080 }), port('u', 53, { protocol: 'UDP' })], externalIPs: ['192.0.2.7'], externalTrafficPolicy: 'Local', sessionAffinity: 'ClientIP' }, { loadBalancer: { ingress: [{ ip: '2001:db8::1' }] } });
const WEB = svc('web', { clusterIPs: ['10.96.0.21', 'fd00:96::21'], ports: [port('http', 80)] });
const SLICES = [
  slice('a', 'lb', [ep('10.244.1.5', 'n1'), ep('10.244.2.5', 'n2')], [{ name: '', port: 8080 }, { name: 'u', port: 53, protocol: 'UDP' }]),
  slice('w4', 'web', [ep('10.244.1.6', 'n1'), ep('10.244.2.6'), ep('10.244.2.7')], [{ name: 'http', port: 8080 }]),
  slice('w6', 'web', [ep('fd00:244::6', 'n1')], [{ name: 'http', port: 8080 }], 'IPv6'),
];
const table = () => parseSvcListing(readFileSync(new URL('../../agent/services/listing.fixture.json', import.meta.url), 'utf8'));

void describe('doctor check services', () => {
  it('the table weftd programmed agrees with the API', () => {
    const r = compareServiceTable({ table: table(), services: [LB, WEB], slices: SLICES, nodeName: 'n1', clusterCidrs: ['10.244.0.0/16'] });
    assert.deepEqual(r.problems, []);
    // Endpoint slots: the LoadBalancer's endpoints sit behind its ClusterIP, external address and NodePort, the local ones once more for ETP Local.
    assert.deepEqual(r.facts, { services: 2, ports: 6, endpoints: 17, rules: 'compared', differences: 0 });
    // Other cluster networks: every chain with a masquerade rule differs.
    assert.ok(compareServiceTable({ table: table(), services: [LB, WEB], slices: SLICES, nodeName: 'n1', clusterCidrs: ['10.0.0.0/8'] }).problems.length > 0);
  });

  it('finds a Service missing, a stale address, a changed endpoint and a stale endpoint map', () => {
    const t = table();
    t.elements.get('svc4')?.delete('10.96.0.21 . tcp . 80');
    t.elements.get('svc4')?.set('10.96.9.9 . tcp . 80', 'goto svc-0000000000000000');
    const web4 = [...t.epMaps].find(([, m]) => [...m.values()].includes('10.244.2.7 . 8080'));
    if (web4 !== undefined) t.epMaps.set(web4[0], new Map(web4[1]).set(2, '10.244.9.9 . 8080'));
    t.epMaps.set('mepc-00000000000000ff', new Map([[0, '10.244.3.3 . 80']]));
    const r = compareServiceTable({ table: t, services: [LB, WEB], slices: SLICES, nodeName: 'n1' });
    const details = r.problems.map((p) => p.detail);
    assert.equal(details.length, 4, details.join('\n'));
    assert.match(details[0] ?? '', /^10\.96\.0\.21 \. tcp \. 80 is missing from map svc4/);
    assert.match(details[1] ?? '', /^10\.96\.9\.9 \. tcp \. 80 in map svc4 .* stale/);
    assert.match(details[2] ?? '', /^default\/web\/http\/tcp\/v4: endpoints differ .* missing 10\.244\.2\.7 \. 8080; not usable any more 10\.244\.9\.9 \. 8080/);
    assert.match(details[3] ?? '', /mepc-00000000000000ff belongs to no Service port/);
  });

  it('an endpoint on another node: ETP Local answers differ by node name', () => {
    const r = compareServiceTable({ table: table(), services: [LB, WEB], slices: SLICES, nodeName: 'n2', clusterCidrs: ['10.244.0.0/16'] });
    assert.ok(r.problems.some((p) => /^default\/lb\/\/tcp\/v4: endpoints differ in epn?l4t\//.test(p.detail)), JSON.stringify(r.problems));
  });

  it('skipped without the table, without NODE_NAME, or when the API cannot be read', async () => {
    const never = () => Promise.reject(new Error('not called'));
    assert.match((await checkServicesOnNode({ env: { NODE_NAME: 'n1' }, list: never, read: () => null })).skipped ?? '', /without --service-proxy/);
    assert.match((await checkServicesOnNode({ env: {}, list: never, read: table })).skipped ?? '', /NODE_NAME/);
    const down = await checkServicesOnNode({ env: { NODE_NAME: 'n1' }, list: () => Promise.reject(new Error('connect ECONNREFUSED')), read: table });
    assert.match(down.skipped ?? '', /cannot read Services from the API.*ECONNREFUSED/);
    const ok = await checkServicesOnNode({ env: { NODE_NAME: 'n1' }, list: () => Promise.resolve({ services: [LB, WEB], slices: SLICES }), read: table, clusterCidrs: ['10.244.0.0/16'] });
    assert.equal(ok.skipped, undefined);
    assert.deepEqual(ok.problems, []);
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { serviceUnits, allUnits } from '../../../../agent/services/model.ts';
import { capacitiesOf, renderAll } from '../../../../agent/services/render.ts';
import { assumeApplied, diffContent } from '../../../../agent/services/diff.ts';
import { nothingHeld } from '../../../../agent/services/apply.ts';
import { parseSvcListing } from '../../../../agent/services/kernel.ts';
import { behaviourChains } from '../../../../agent/services/shared-chains.ts';
import { NODE, ep, port, slice, svc } from './fixtures.ts';
import type { Service, EndpointSlice } from '../../../../agent/services/types.ts';

// The Service and slice the listing fixture was taken from (`nft -j list table inet weft-svc` on nft 1.0.6 after applying them, each chain's first rule kept).
const LB = svc('lb', { type: 'LoadBalancer', clusterIPs: ['10.96.0.20', 'fd00:96::20'], ports: [port('', 80, { nodePort: 30080 }), port('u', 53, { protocol: 'UDP' })], externalIPs: ['192.0.2.7'], externalTrafficPolicy: 'Local', sessionAffinity: 'ClientIP' }, { loadBalancer: { ingress: [{ ip: '2001:db8::1' }] } });
const LB_SLICE = slice('a', 'lb', [ep('10.244.1.5', 'n1'), ep('10.244.2.5', 'n2')], [{ name: '', port: 8080 }, { name: 'u', port: 53, protocol: 'UDP' }]);
const WEB = svc('web', { clusterIPs: ['10.96.0.21', 'fd00:96::21'], ports: [port('http', 80)] });
const WEB_SLICES = [slice('w4', 'web', [ep('10.244.1.6', 'n1'), ep('10.244.2.6'), ep('10.244.2.7')], [{ name: 'http', port: 8080 }]), slice('w6', 'web', [ep('fd00:244::6', 'n1')], [{ name: 'http', port: 8080 }], 'IPv6')];

function many(n: number): { services: Service[]; slices: Map<string, EndpointSlice[]> } {
  const services: Service[] = [];
  const slices = new Map<string, EndpointSlice[]>();
  for (let i = 0; i < n; i++) {
    services.push(svc(`s${i}`, { clusterIP: `10.96.${i >> 8}.${i & 255}`, ports: [port('http', 80)] }));
    slices.set(`default/s${i}`, [slice(`s${i}-x`, `s${i}`, [ep(`10.244.${i >> 8}.${i & 255}`), ep(`10.245.${i >> 8}.${i & 255}`)], [{ name: 'http', port: 8080 }])]);
  }
  return { services, slices };
}

void describe('services diff', () => {
  it('a kernel listing parses back to what was applied: no change to make', () => {
    const have = parseSvcListing(readFileSync(new URL('./listing.fixture.json', import.meta.url), 'utf8'));
    const want = renderAll([...serviceUnits(LB, [LB_SLICE], NODE), ...serviceUnits(WEB, WEB_SLICES, NODE)], NODE);
    assert.equal(have.elements.get('svc4')?.get('10.96.0.20 . tcp . 80'), 'goto svca4t');
    assert.equal(have.elements.get('pick4')?.get('10.96.0.20 . tcp . 80'), 'goto svcc4t-2');
    // Shared endpoint maps: address . port . slot (or nodePort . slot) -> address . port, both families; ETP Local's local endpoints apart.
    const eps = (n: string) => [...(have.epMaps.get(n)?.values() ?? [])].sort();
    assert.deepEqual(eps('ep4t/10.96.0.21 . 80'), ['10.244.1.6 . 8080', '10.244.2.6 . 8080', '10.244.2.7 . 8080']);
    assert.deepEqual(eps('ep6t/fd00:96::21 . 80'), ['fd00:244::6 . 8080']);
    assert.deepEqual(eps('epn4t/30080'), ['10.244.1.5 . 8080', '10.244.2.5 . 8080']);
    assert.deepEqual(eps('epnl4t/30080'), ['10.244.1.5 . 8080']);
    assert.deepEqual(eps('epl4t/192.0.2.7 . 80'), ['10.244.1.5 . 8080']);
    assert.equal(have.chains.get('affrec4-10800')?.length, 12);
    assert.equal(have.elements.get('noep6')?.get('fd00:96::20 . tcp . 80'), 'goto reject-chain');
    assert.equal(have.elements.get('noepnp6')?.get('tcp . 30080'), 'goto reject-chain');
    assert.equal(have.elements.get('hairpin4')?.get('10.244.1.5 . 10.244.1.5'), '');
    assert.deepEqual(diffContent(want, have).commands, []);
  });

  it('from nothing: the one chain (the affinity timeout\'s recorder) before the elements that point at it; applied content diffs empty', () => {
    const want = renderAll(serviceUnits(LB, [LB_SLICE], NODE), NODE);
    const p = diffContent(want, nothingHeld());
    const firstElement = p.commands.findIndex((c) => c.startsWith('add element'));
    assert.deepEqual(p.commands.filter((c) => c.startsWith('add chain')), ['add chain inet weft-svc affrec4-10800']);
    assert.ok(p.commands.indexOf('add chain inet weft-svc affrec4-10800') < firstElement);
    assert.ok(p.commands.includes('add element inet weft-svc affrec4 { 10.96.0.20 . tcp . 80 : goto affrec4-10800 }'));
    assert.ok(p.commands.includes('add element inet weft-svc affrecnp4 { tcp . 30080 : goto affrec4-10800 }'));
    assert.deepEqual(diffContent(want, assumeApplied(want)).commands, []);
  });

  it('no chain per Service of any kind: 1,000 NodePort / LoadBalancer / ETP Local / affinity Services render elements only', () => {
    const kinds: Array<NonNullable<Service['spec']>> = [
      { type: 'NodePort' }, { type: 'LoadBalancer', externalIPs: ['192.0.2.1'] }, { type: 'NodePort', externalTrafficPolicy: 'Local' },
      { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } }, { type: 'NodePort', sessionAffinity: 'ClientIP', internalTrafficPolicy: 'Local' },
    ];
    const services: Service[] = [];
    const slices = new Map<string, EndpointSlice[]>();
    for (let i = 0; i < 1000; i++) {
      const spec = kinds[i % kinds.length]!;
      services.push(svc(`s${i}`, { ...spec, ...(spec.externalIPs !== undefined ? { externalIPs: [`192.0.${i >> 8}.${i & 255}`] } : {}), clusterIP: `10.96.${i >> 8}.${i & 255}`, ports: [port('http', 80, { nodePort: 30000 + i })] }));
      slices.set(`default/s${i}`, [slice(`s${i}-x`, `s${i}`, [ep(`10.244.${i >> 8}.${i & 255}`, 'n1'), ep(`10.245.${i >> 8}.${i & 255}`)], [{ name: 'http', port: 8080 }])]);
    }
    const c = renderAll(allUnits(services, (k) => slices.get(k) ?? [], NODE), NODE);
    assert.deepEqual([...c.chains.keys()].sort(), ['affrec4-10800', 'affrec4-60']);
    assert.equal(c.elements.get('np4')?.size, 800);
    assert.equal(c.elements.get('svc4')?.size, 1200);
    assert.equal(c.affinity.size, 600);
    const p = diffContent(c, nothingHeld());
    assert.equal(p.commands.filter((x) => !x.startsWith('add element')).length, 4, 'two recorder chains and their rules, nothing else');
  });

  it('one endpoint change among 2,000 Services is element-only: one slot rewritten, hairpin pairs follow', () => {
    const { services, slices } = many(2000);
    const before = renderAll(allUnits(services, (k) => slices.get(k) ?? [], NODE), NODE);
    const [only] = slices.get('default/s1234') ?? [];
    slices.set('default/s1234', [{ ...only!, endpoints: [ep('10.244.4.210'), ep('10.244.99.1')] }]);
    const after = renderAll(allUnits(services, (k) => slices.get(k) ?? [], NODE), NODE);
    const p = diffContent(after, assumeApplied(before));
    assert.deepEqual([p.head, p.tail, p.chainsChanged, p.chainsAdded, p.chainsDeleted], [[], [], 0, 0, 0]);
    // A ClusterIP-only Service's slots live in the shared map behind its address . port: 10.244.4.210 keeps slot 0, 10.245.4.210 (slot 1) is replaced.
    assert.deepEqual(p.commands.filter((c) => c.includes(' ep4t ')), [
      'delete element inet weft-svc ep4t { 10.96.4.210 . 80 . 1 }',
      'add element inet weft-svc ep4t { 10.96.4.210 . 80 . 1 : 10.244.99.1 . 8080 }',
    ]);
    assert.deepEqual(p.commands.filter((c) => c.includes('hairpin4')), [
      'delete element inet weft-svc hairpin4 { 10.245.4.210 . 10.245.4.210 }',
      'add element inet weft-svc hairpin4 { 10.244.99.1 . 10.244.99.1 }',
    ]);
    assert.equal(p.commands.length, 4);
  });

  it('a count change inside the capacity is slots only; crossing it moves the address to the next shared chain, still element-only', () => {
    const s = svc('a', { clusterIP: '10.96.0.5', ports: [port('', 80)] });
    const render = (n: number, caps?: Map<string, number>) => renderAll(serviceUnits(s, [slice('x', 'a', Array.from({ length: n }, (_, i) => ep(`10.244.1.${i + 1}`)), [{ name: '', port: 80 }])], NODE), NODE, caps);
    const eight = render(8);
    assert.equal(eight.elements.get('svc4')?.get('10.96.0.5 . tcp . 80'), 'goto svcc4t-8');
    const nine = render(9, capacitiesOf(eight));
    const up = diffContent(nine, assumeApplied(eight));
    assert.deepEqual([up.head, up.tail], [[], []]);
    assert.ok(up.commands.includes('add element inet weft-svc svc4 { 10.96.0.5 . tcp . 80 : goto svcc4t-16 }'));
    assert.ok(up.commands.includes('add element inet weft-svc ep4t { 10.96.0.5 . 80 . 8 : 10.244.1.9 . 80 }'));
    const back = render(8, capacitiesOf(nine));
    const down = diffContent(back, assumeApplied(nine));
    assert.deepEqual([down.head, down.tail, down.elementsAdded], [[], [], 0], '9 -> 8 keeps capacity 16: slot 8 and its hairpin pair deleted');
    assert.equal(back.elements.get('svc4')?.get('10.96.0.5 . tcp . 80'), 'goto svcc4t-16');
    // With affinity too: the second lookup (pick4) moves to the next shared chain.
    const aff = svc('b', { clusterIP: '10.96.0.6', ports: [port('', 80)], sessionAffinity: 'ClientIP' });
    const ra = (n: number) => renderAll(serviceUnits(aff, [slice('y', 'b', Array.from({ length: n }, (_, i) => ep(`10.244.2.${i + 1}`)), [{ name: '', port: 80 }])], NODE), NODE);
    const affUp = diffContent(ra(3), assumeApplied(ra(2)));
    assert.deepEqual([affUp.head, affUp.tail], [[], []]);
    assert.ok(affUp.commands.includes('add element inet weft-svc pick4 { 10.96.0.6 . tcp . 80 : goto svcc4t-4 }'));
  });

  it('last endpoint gone: ClusterIP moves from svc4 to the reject map and its slots go; back again', () => {
    const s = svc('a', { clusterIP: '10.96.0.5', ports: [port('', 80)] });
    const withEp = renderAll(serviceUnits(s, [slice('x', 'a', [ep('10.244.1.1')], [{ name: '', port: 80 }])], NODE), NODE);
    const without = renderAll(serviceUnits(s, [], NODE), NODE);
    const p = diffContent(without, assumeApplied(withEp));
    assert.ok(p.commands.includes('delete element inet weft-svc svc4 { 10.96.0.5 . tcp . 80 }'));
    assert.ok(p.commands.includes('add element inet weft-svc noep4 { 10.96.0.5 . tcp . 80 : goto reject-chain }'));
    assert.equal(p.chainsDeleted, 0);
    assert.ok(p.commands.includes('delete element inet weft-svc ep4t { 10.96.0.5 . 80 . 0 }'));
    const back = diffContent(withEp, assumeApplied(without));
    assert.equal(back.chainsAdded, 0);
    assert.ok(back.commands.includes('add element inet weft-svc svc4 { 10.96.0.5 . tcp . 80 : goto svcc4t-1 }'));
    assert.ok(back.commands.includes('delete element inet weft-svc noep4 { 10.96.0.5 . tcp . 80 }'));
  });

  it('ETP Local without a local endpoint: external address and NodePort dropped, in-cluster sources short-circuit', () => {
    const s = svc('np', { type: 'NodePort', clusterIP: '10.96.0.6', ports: [port('', 80, { nodePort: 30001 })], externalTrafficPolicy: 'Local', externalIPs: ['192.0.2.9'] });
    const c = renderAll(serviceUnits(s, [slice('x', 'np', [ep('10.244.2.2', 'n2')], [{ name: '', port: 80 }])], NODE), NODE);
    assert.equal(c.elements.get('noepnp4')?.get('tcp . 30001'), 'drop');
    assert.equal(c.elements.get('noep4')?.get('192.0.2.9 . tcp . 80'), 'drop');
    assert.equal(c.elements.get('noep4')?.has('10.96.0.6 . tcp . 80'), false);
    // External traffic: the shared ETP Local chain; in-cluster sources short-circuit to every endpoint through pick4, the rest find no local endpoint.
    assert.equal(c.elements.get('svc4')?.get('192.0.2.9 . tcp . 80'), 'goto etl4t');
    assert.equal(c.elements.get('pick4')?.get('192.0.2.9 . tcp . 80'), 'goto svcc4t-1');
    assert.equal(c.elements.get('pickl4')?.has('192.0.2.9 . tcp . 80'), false);
    assert.equal(c.elements.get('np4')?.get('tcp . 30001'), 'goto npetl4t');
    assert.equal(c.elements.get('picknp4')?.get('tcp . 30001'), 'goto pkn4t-1');
    const etl = behaviourChains(4, 'tcp', NODE).find((x) => x.name === 'etl4t')?.rules ?? [];
    assert.equal(etl.some((r) => r.includes('mark-masq') && !r.startsWith('fib saddr type local')), false, 'external traffic keeps its source');
    assert.equal(etl[0], 'ip saddr { 10.244.0.0/16 } ip daddr . meta l4proto . th dport vmap @pick4');
    assert.equal(etl.at(-1), 'ip daddr . meta l4proto . th dport vmap @pickl4');
  });

  it('affinity: clients pinned to a removed endpoint, or through a key without affinity now, are deleted from the shared map', () => {
    const s = svc('af', { clusterIP: '10.96.0.7', ports: [port('', 80)], sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } });
    const want = renderAll(serviceUnits(s, [slice('x', 'af', [ep('10.244.1.1')], [{ name: '', port: 80 }])], NODE), NODE);
    const have = assumeApplied(want);
    have.affinity.set('10.96.0.7 . tcp . 80', { clients: new Map([['10.244.7.7 . 10.96.0.7 . tcp . 80', '10.244.1.1 . 80'], ['10.244.7.8 . 10.96.0.7 . tcp . 80', '10.244.1.9 . 80']]) });
    have.affinity.set('10.96.0.8 . tcp . 80', { clients: new Map([['10.244.7.7 . 10.96.0.8 . tcp . 80', '10.244.1.1 . 80']]) });
    assert.deepEqual(diffContent(want, have).commands, [
      'delete element inet weft-svc aff4 { 10.244.7.8 . 10.96.0.7 . tcp . 80 }',
      'delete element inet weft-svc aff4 { 10.244.7.7 . 10.96.0.8 . tcp . 80 }',
    ]);
    assert.deepEqual(want.chains.get('affrec4-60')?.rules, ['meta l4proto { tcp, udp } update @aff4 { ip saddr . ct original ip daddr . meta l4proto . ct original proto-dst timeout 60s : ip daddr . th dport }']);
    assert.equal(want.elements.get('svc4')?.get('10.96.0.7 . tcp . 80'), 'goto svca4t');
  });
});

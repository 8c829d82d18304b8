import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serviceUnits } from '../../../../agent/services/model.ts';
import { capacitiesOf, renderAll } from '../../../../agent/services/render.ts';
import { assumeApplied, diffContent, recordSlots } from '../../../../agent/services/diff.ts';
import { compactContent } from '../../../../agent/services/fragments.ts';
import { decodeUnits, encodeUnits, programmedOf, replay } from '../../../../agent/services/programmed.ts';
import { NODE, ep, port, slice, svc } from './fixtures.ts';

const LB = svc('lb', {
  type: 'LoadBalancer', clusterIPs: ['10.96.0.20', 'fd00:96::20'], ports: [port('', 80, { nodePort: 30080 }), port('dns', 53, { protocol: 'UDP' })], externalIPs: ['192.0.2.7'],
  externalTrafficPolicy: 'Local', internalTrafficPolicy: 'Local', sessionAffinity: 'ClientIP', healthCheckNodePort: 31000,
}, { loadBalancer: { ingress: [{ ip: '198.51.100.1' }, { ip: '2001:db8::1' }] } });
const LB_SLICES = [
  slice('a', 'lb', [ep('10.244.1.5', 'n1'), ep('10.244.2.5', 'n2'), ep('10.244.1.6', 'n1', { ready: false, serving: true, terminating: true })], [{ name: '', port: 8080 }, { name: 'dns', port: 5353, protocol: 'UDP' }]),
  slice('b', 'lb', [ep('fd00:244::5', 'n2', { ready: false, serving: true, terminating: true })], [{ name: '', port: 8080 }], 'IPv6'),
];
const web = (n: number) => serviceUnits(svc('web', { clusterIP: '10.96.0.21', ports: [port('http', 80)] }), [slice('w', 'web', Array.from({ length: n }, (_, i) => ep(`10.244.3.${i + 1}`)), [{ name: 'http', port: 8080 }])], NODE);

void describe('services programmed records', () => {
  it('units come back as serviceUnits made them (traffic policies, dual stack, NodePort, health check, affinity, UDP, terminating endpoints, none at all)', () => {
    const cases = [
      serviceUnits(LB, LB_SLICES, NODE),
      serviceUnits(svc('plain', { clusterIP: '10.96.0.22', ports: [port('http', 80)] }), [], NODE),
      serviceUnits(svc('etp', { type: 'NodePort', clusterIP: '10.96.0.23', externalTrafficPolicy: 'Local', ports: [port('p', 81, { nodePort: 30081 })] }), [slice('e', 'etp', [ep('10.244.2.9', 'n2')], [{ name: 'p', port: 81 }])], NODE),
      web(3),
    ];
    assert.ok(cases[0]!.length === 4 && cases[0]!.some((u) => u.itpLocal && u.internal.length === 1 && u.cluster.length === 2));
    for (const units of cases) assert.deepEqual(decodeUnits(encodeUnits(units)), units);
    assert.deepEqual(decodeUnits(''), []);
    assert.equal(programmedOf(undefined, []), undefined);
  });

  it('replay gives back the applied fragment: capacities kept by hysteresis and slots out of endpoint order', () => {
    // 8 endpoints, then 4: the capacity stays 8 (a render without history gives 4), so the record keeps it.
    const first = compactContent(renderAll(web(8), NODE));
    const shrunk = compactContent(renderAll(web(4), NODE, capacitiesOf(first)));
    assert.deepEqual([...capacitiesOf(shrunk).values()], [8]);
    assert.deepEqual([...capacitiesOf(compactContent(renderAll(web(4), NODE))).values()], [4]);
    assert.equal(programmedOf(shrunk, web(4))?.caps?.size, 1);
    assert.equal(programmedOf(first, web(8))?.caps, undefined);
    for (const [frag, units] of [[shrunk, web(4)], [first, web(8)]] as const) {
      const p = programmedOf(frag, units);
      assert.deepEqual(replay(p).frag, frag);
      assert.deepEqual(replay(p).units, units);
    }
    // A kernel holding the endpoints in other slots: the recorded assignment is kept and replayed, so the next diff is empty.
    const have = assumeApplied(first);
    const name = [...first.epMaps.keys()][0]!;
    have.epMaps.set(name, new Map([...(have.epMaps.get(name) ?? [])].reverse().map(([s], i) => [s, `10.244.3.${i + 1} . 8080`])));
    const again = compactContent(renderAll(web(8), NODE));
    const plan = diffContent(again, have);
    assert.equal(plan.elems.length, 0);
    recordSlots(again, plan);
    const p = programmedOf(again, web(8));
    assert.equal(p?.slots?.size, 1);
    const back = replay(p).frag!;
    assert.deepEqual(back, again);
    assert.equal(diffContent(compactContent(renderAll(web(8), NODE, capacitiesOf(back))), assumeApplied(back)).elems.length, 0);
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serviceUnits } from '../../../../agent/services/model.ts';
import { renderAll } from '../../../../agent/services/render.ts';
import { assumeApplied, diffContent, recordSlots } from '../../../../agent/services/diff.ts';
import { compactContent, unitHairpins } from '../../../../agent/services/fragments.ts';
import { NODE, ep, port, slice, svc } from './fixtures.ts';

const WEB = svc('web', { clusterIP: '10.96.0.21', ports: [port('http', 80)] });
const render = (ips: string[]) => compactContent(renderAll(serviceUnits(WEB, ips.length === 0 ? [] : [slice('w', 'web', ips.map((a) => ep(a)), [{ name: 'http', port: 8080 }])], NODE), NODE));

void describe('services fragments', () => {
  it('a compacted fragment keeps only its non-empty element maps', () => {
    const c = render(['10.244.1.6', '10.244.2.6']);
    assert.deepEqual([...c.elements.keys()].sort(), ['hairpin4', 'svc4']);
    assert.equal(c.elements.get('svc4')?.size, 1);
  });

  it('a map the wanted fragment no longer has is emptied by the diff (endpoints gone: svc4 -> noep4)', () => {
    const before = render(['10.244.1.6']);
    const after = render([]);
    assert.equal(after.elements.has('svc4'), false);
    const cmds = diffContent(after, assumeApplied(before)).commands;
    assert.ok(cmds.includes('delete element inet weft-svc svc4 { 10.96.0.21 . tcp . 80 }'), cmds.join('\n'));
    assert.ok(cmds.includes('delete element inet weft-svc hairpin4 { 10.244.1.6 . 10.244.1.6 }'));
    assert.ok(cmds.includes('add element inet weft-svc noep4 { 10.96.0.21 . tcp . 80 : goto reject-chain }'));
    assert.deepEqual(diffContent(before, assumeApplied(after)).commands.filter((x) => x.startsWith('delete')), ['delete element inet weft-svc noep4 { 10.96.0.21 . tcp . 80 }']);
  });

  it('the hairpin pairs counted from the units are the ones rendered', () => {
    const units = serviceUnits(svc('two', { clusterIPs: ['10.96.0.22', 'fd00:96::22'], ports: [port('http', 80), port('dns', 53, { protocol: 'UDP' })] }), [
      slice('a', 'two', [ep('10.244.1.6'), ep('10.244.2.6', 'n1')], [{ name: 'http', port: 8080 }, { name: 'dns', port: 53, protocol: 'UDP' }]),
      slice('b', 'two', [ep('fd00:244::6')], [{ name: 'http', port: 8080 }], 'IPv6'),
    ], NODE);
    const rendered = renderAll(units, NODE);
    const counted = unitHairpins(units);
    assert.deepEqual([...counted.keys()].sort(), ['hairpin4', 'hairpin6']);
    for (const h of ['hairpin4', 'hairpin6'] as const) assert.deepEqual([...(counted.get(h) ?? [])].map((a) => `${a} . ${a}`).sort(), [...(rendered.elements.get(h)?.keys() ?? [])].sort());
    assert.equal(counted.get('hairpin4')?.size, 2);
    assert.equal(unitHairpins(undefined).size, 0);
  });
});

void describe('services slot records', () => {
  it('a slot assignment in endpoint order is not kept; another one is, and the next diff starts from it', () => {
    const c = render(['10.244.1.6', '10.244.2.6']);
    const plan = diffContent(c, assumeApplied(render([])));
    recordSlots(c, plan);
    const m = [...c.epMaps.values()][0];
    assert.equal(m?.slots, undefined);
    // The kernel holds the two endpoints the other way round: that assignment is recorded.
    const have = assumeApplied(c);
    have.epMaps.set([...c.epMaps.keys()][0] as string, new Map([[0, '10.244.2.6 . 8080'], [1, '10.244.1.6 . 8080']]));
    const again = render(['10.244.1.6', '10.244.2.6']);
    const p2 = diffContent(again, have);
    assert.equal(p2.elems.length, 0);
    recordSlots(again, p2);
    const m2 = [...again.epMaps.values()][0];
    assert.deepEqual([...(m2?.slots ?? [])], [[0, '10.244.2.6 . 8080'], [1, '10.244.1.6 . 8080']]);
    assert.deepEqual(diffContent(render(['10.244.1.6', '10.244.2.6']), assumeApplied(again)).elems.length, 0);
  });
});

// Verdict maps in the whole-table model: diffTable's order (map elements after the chains they jump
// to, a gone map before those chains go), a listing read back, and the netlink element delta (data
// kept on adds, keys alone on deletes, a changed verdict as delete + add).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nftExpr } from '../../../../lib/netfilter/expr.ts';
import { mapElementKey, splitMapElement } from '../../../../lib/netfilter/map-elements.ts';
import { parseNftListing } from '../../../../lib/netfilter/parse-listing.ts';
import { contentFromListing, diffTable, taggedRule, type TableContent, type TableSet } from '../../../../lib/netfilter/table-diff.ts';
import { deltaElem, elementOnlyDelta } from '../../../../lib/netfilter/table-elem-diff.ts';
import { shrinkOnlyDelta } from '../../../../lib/netfilter/table-shrink.ts';

const ref = { family: 'inet', name: 'weft-t' } as const;

/** A base chain's `vmap` lookup in map m-1 whose elements jump to group chains g-<name>. */
function table(els: Record<string, string>, withMap = true): TableContent {
  const groups = [...new Set(Object.values(els))].sort();
  const sets = new Map<string, TableSet>([['s-1', { spec: { type: 'ipv4_addr' }, elements: new Set(['10.0.9.1']) }]]);
  if (withMap) sets.set('m-1', { spec: { type: 'ipv4_addr', data: 'verdict' }, elements: new Set(Object.entries(els).map(([ip, g]) => mapElementKey(ip, `jump g-${g}`))) });
  const chains = new Map<string, { base?: { type: 'filter'; hook: 'forward'; priority: number; policy: 'accept' }; rules: ReturnType<typeof taggedRule>[] }>();
  for (const g of groups) chains.set(`g-${g}`, { rules: [taggedRule(nftExpr`ip saddr @s-1 accept`, `g ${g}`)] });
  chains.set('base-1', { base: { type: 'filter', hook: 'forward', priority: 0, policy: 'accept' }, rules: withMap ? [taggedRule(nftExpr`ip daddr vmap @m-1`, 'groups')] : [] });
  return { sets, chains };
}

void describe('verdict maps in table diffs', () => {
  it('formats and splits a map element', () => {
    assert.equal(mapElementKey('fd00::1', 'jump g-a'), 'fd00::1 : jump g-a');
    assert.deepEqual(splitMapElement('fd00::1 : jump g-a'), { key: 'fd00::1', data: 'jump g-a' });
    assert.throws(() => mapElementKey('10.0.0.1', 'jump Bad'), /expected/);
  });

  it('from nothing: the map is added as a map, its elements after the chains they jump to', () => {
    const lines = diffTable(ref, null, table({ '10.0.0.1': 'a' })).script.trim().split('\n');
    assert.ok(lines.includes('add map inet weft-t m-1 { type ipv4_addr : verdict; }'));
    const el = lines.indexOf('add element inet weft-t m-1 { 10.0.0.1 : jump g-a }');
    assert.ok(el > lines.indexOf('add chain inet weft-t g-a') && el > lines.findIndex((l) => l.startsWith('add chain inet weft-t base-1')), lines.join('\n'));
  });

  it('a changed verdict is the key deleted (before the chains) and the new element added (after them); an old group goes last', () => {
    const lines = diffTable(ref, table({ '10.0.0.1': 'a', '10.0.0.2': 'b' }), table({ '10.0.0.1': 'c', '10.0.0.2': 'b' })).script.trim().split('\n');
    assert.equal(lines[0], 'delete element inet weft-t m-1 { 10.0.0.1 }');
    assert.equal(lines[1], 'add chain inet weft-t g-c');
    assert.deepEqual(lines.slice(3), ['add element inet weft-t m-1 { 10.0.0.1 : jump g-c }', 'flush chain inet weft-t g-a', 'delete chain inet weft-t g-a']);
  });

  it('a map removed goes before the chains its verdicts jump to', () => {
    const lines = diffTable(ref, table({ '10.0.0.1': 'a' }), table({}, false)).script.trim().split('\n');
    assert.ok(lines.indexOf('delete map inet weft-t m-1') < lines.indexOf('delete chain inet weft-t g-a'), lines.join('\n'));
    assert.ok(!lines.some((l) => l.startsWith('delete set inet weft-t m-1')));
  });

  it('reads a listed map back: its elements with their verdicts, its data type', () => {
    const want = table({ '10.0.0.1': 'a' });
    const listing = JSON.stringify({ nftables: [
      { map: { family: 'inet', table: 'weft-t', name: 'm-1', type: 'ipv4_addr', map: 'verdict', handle: 2, elem: [['10.0.0.1', { jump: { target: 'g-a' } }]] } },
    ] });
    const m = contentFromListing(parseNftListing(listing)).sets.get('m-1');
    assert.deepEqual([...(m?.elements ?? [])], [...(want.sets.get('m-1')?.elements ?? [])]);
    assert.deepEqual(m?.spec, { type: ['ipv4_addr'], flags: [], data: 'verdict' });
  });

  it('element-only: a pod moved to an existing group is one delete by key and one add with its verdict', () => {
    const held = table({ '10.0.0.1': 'a', '10.0.0.2': 'b' });
    const want = table({ '10.0.0.1': 'b', '10.0.0.2': 'a' });
    const delta = elementOnlyDelta(held, want);
    assert.deepEqual(delta?.map((d) => [d.set, d.data, [...d.add].sort(), [...d.del].sort()]), [['m-1', 'verdict', ['10.0.0.1 : jump g-b', '10.0.0.2 : jump g-a'], ['10.0.0.1 : jump g-a', '10.0.0.2 : jump g-b']]]);
    const d = delta?.[0];
    assert.ok(d);
    assert.deepEqual(deltaElem(d, '10.0.0.1 : jump g-b', true), { key: Uint8Array.of(10, 0, 0, 1), data: { verdict: 'jump', chain: 'g-b' } });
    assert.deepEqual(deltaElem(d, '10.0.0.1 : jump g-a', false), { key: Uint8Array.of(10, 0, 0, 1) });
    assert.throws(() => deltaElem(d, '10.0.0.1 : jump', true), /no verdict/);
    assert.equal(elementOnlyDelta(held, table({ '10.0.0.1': 'c', '10.0.0.2': 'b' })), null, 'a new group chain is no element-only change');
  });

  it('removal-only: the last pod of a group leaves for another group, and the group chain goes', () => {
    const s = shrinkOnlyDelta(table({ '10.0.0.1': 'a', '10.0.0.2': 'b' }), table({ '10.0.0.1': 'b', '10.0.0.2': 'b' }));
    assert.deepEqual(s?.chains, ['g-a']);
    assert.deepEqual(s?.elements.map((e) => [e.add, e.del]), [[['10.0.0.1 : jump g-b'], ['10.0.0.1 : jump g-a']]]);
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nftExpr } from '../../../../lib/netfilter/expr.ts';
import { contentFromListing, diffTable, taggedRule, type TableContent } from '../../../../lib/netfilter/table-diff.ts';
import { parseNftListing } from '../../../../lib/netfilter/parse-listing.ts';

const ref = { family: 'inet', name: 'weft-t' } as const;

function content(elements: string[], rules: string[], extra = false): TableContent {
  const sets = new Map([['s-1', { spec: { type: 'ipv4_addr' as const }, elements: new Set(elements) }]]);
  if (extra) sets.set('s-2', { spec: { type: 'ipv4_addr' as const }, elements: new Set<string>() });
  const chains = new Map([
    ['c-1', { rules: rules.map((r) => taggedRule(nftExpr`ip saddr @s-1 tcp dport ${Number(r)} accept`, 'p')) }],
    ['base-1', { base: { type: 'filter' as const, hook: 'forward' as const, priority: 0, policy: 'accept' as const }, rules: [taggedRule(nftExpr`jump c-1`, 'j')] }],
  ]);
  return { sets, chains };
}

void describe('diffTable', () => {
  it('from nothing: table, sets, elements, then regular chains before base chains', () => {
    const { script } = diffTable(ref, null, content(['10.0.0.1'], ['80']));
    const lines = script.trim().split('\n');
    assert.equal(lines[0], 'add table inet weft-t');
    assert.ok(lines.indexOf('add chain inet weft-t c-1') < lines.findIndex((l) => l.startsWith('add chain inet weft-t base-1')));
    assert.ok(lines.includes('add element inet weft-t s-1 { 10.0.0.1 }'));
  });

  it('nothing differs: empty script; an element change touches only that element', () => {
    const held = content(['10.0.0.1', '10.0.0.2'], ['80']);
    assert.equal(diffTable(ref, held, content(['10.0.0.1', '10.0.0.2'], ['80'])).script, '');
    const { script, stats } = diffTable(ref, held, content(['10.0.0.1', '10.0.0.3'], ['80']));
    assert.equal(script, 'delete element inet weft-t s-1 { 10.0.0.2 }\nadd element inet weft-t s-1 { 10.0.0.3 }\n');
    assert.deepEqual([stats.elementsAdded, stats.elementsDeleted, stats.chainsRewritten], [1, 1, 0]);
  });

  it('a changed chain is flushed and rewritten; removed chains go before removed sets', () => {
    const held = content(['10.0.0.1'], ['80'], true);
    const want: TableContent = { sets: content(['10.0.0.1'], []).sets, chains: new Map([...content([], ['81']).chains].filter(([n]) => n === 'c-1')) };
    const lines = diffTable(ref, held, want).script.trim().split('\n');
    assert.equal(lines[0], 'flush chain inet weft-t c-1');
    assert.match(lines[1] ?? '', /^add rule inet weft-t c-1 ip saddr @s-1 tcp dport 81 accept comment "p [0-9a-f]{10}"$/);
    assert.deepEqual(lines.slice(2), ['flush chain inet weft-t base-1', 'delete chain inet weft-t base-1', 'delete set inet weft-t s-2']);
  });

  it('reads a listing back: tags and elements, /32 prefixes as addresses', () => {
    const want = content(['10.0.0.1'], ['80']);
    const tagOf = (n: string) => want.chains.get(n)?.rules[0]?.tag;
    const listing = JSON.stringify({ nftables: [
      { table: { family: 'inet', name: 'weft-t', handle: 1 } },
      { set: { family: 'inet', table: 'weft-t', name: 's-1', type: 'ipv4_addr', handle: 2, elem: [{ prefix: { addr: '10.0.0.1', len: 32 } }] } },
      { chain: { family: 'inet', table: 'weft-t', name: 'c-1', handle: 3 } },
      { chain: { family: 'inet', table: 'weft-t', name: 'base-1', handle: 4, type: 'filter', hook: 'forward', prio: 0, policy: 'accept' } },
      { rule: { family: 'inet', table: 'weft-t', chain: 'c-1', handle: 5, comment: tagOf('c-1'), expr: [] } },
      { rule: { family: 'inet', table: 'weft-t', chain: 'base-1', handle: 6, comment: tagOf('base-1'), expr: [] } },
    ] });
    assert.equal(diffTable(ref, contentFromListing(parseNftListing(listing)), want).script, '');
  });

  it('named counters: added before the chains that count into them, deleted after, read back from a listing', () => {
    const base = content(['10.0.0.1'], ['80']);
    const withK = (ks: string[]): TableContent => ({ ...base, counters: new Set(ks) });
    assert.equal(diffTable(ref, withK(['k-1']), withK(['k-1', 'k-2'])).script, 'add counter inet weft-t k-2\n');
    assert.equal(diffTable(ref, withK(['k-1', 'k-2']), withK(['k-2'])).script, 'delete counter inet weft-t k-1\n');
    const lines = diffTable(ref, null, withK(['k-1'])).script.trim().split('\n');
    assert.ok(lines.indexOf('add counter inet weft-t k-1') < lines.indexOf('add chain inet weft-t c-1'));
    const listing = JSON.stringify({ nftables: [{ counter: { family: 'inet', table: 'weft-t', name: 'k-1', handle: 9, packets: 3, bytes: 180 } }] });
    assert.deepEqual([...(contentFromListing(parseNftListing(listing)).counters ?? [])], ['k-1']);
  });

  it('reads listed host prefixes back as addresses for both families, but keeps an IPv6 /32 a prefix', () => {
    const listing = JSON.stringify({ nftables: [
      { set: { family: 'inet', table: 'weft-t', name: 'b6-1', type: 'ipv6_addr', handle: 2, flags: ['interval'], elem: [{ prefix: { addr: 'fd00::', len: 32 } }, { prefix: { addr: 'fd01::1', len: 128 } }] } },
    ] });
    assert.deepEqual([...(contentFromListing(parseNftListing(listing)).sets.get('b6-1')?.elements ?? [])], ['fd00::/32', 'fd01::1']);
  });
});

// shrinkOnlyDelta: removal-only diffs are recognised, anything that adds or reorders is not.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nftExpr } from '../../../../lib/netfilter/expr.ts';
import { taggedRule, type TableContent, type TableSet } from '../../../../lib/netfilter/table-diff.ts';
import { shrinkOnlyDelta } from '../../../../lib/netfilter/table-shrink.ts';

function table(policies: string[], iso: string[]): TableContent {
  const sets = new Map<string, TableSet>([['iso-in', { spec: { type: 'ipv4_addr' }, elements: new Set(iso) }]]);
  const chains = new Map<string, { base?: { type: 'filter'; hook: 'forward'; priority: number }; rules: ReturnType<typeof taggedRule>[] }>();
  for (const p of policies) {
    sets.set(`s-${p}`, { spec: { type: 'ipv4_addr' }, elements: new Set(['10.0.0.1']) });
    chains.set(`p-${p}`, { rules: [taggedRule(nftExpr`ip saddr @${`s-${p}`} accept`, p)] });
  }
  chains.set('base-1', { base: { type: 'filter', hook: 'forward', priority: 0 }, rules: policies.map((p) => taggedRule(nftExpr`jump ${`p-${p}`}`, `j${p}`)) });
  return { sets, chains, counters: new Set(policies.map((p) => `k-${p}`)) };
}

describe('shrinkOnlyDelta', () => {
  it('a policy removed: its chain, set, counter and jump, and the elements that leave', () => {
    const d = shrinkOnlyDelta(table(['a', 'b', 'c'], ['10.0.0.1', '10.0.0.2']), table(['a', 'c'], ['10.0.0.1']));
    assert.ok(d);
    assert.deepEqual([d.chains, d.sets, d.counters], [['p-b'], ['s-b'], ['k-b']]);
    assert.deepEqual(d.rules.map((r) => [r.chain, r.held.length, r.keep.length]), [['base-1', 3, 2]]);
    assert.deepEqual(d.elements.map((e) => [e.set, e.add, e.del]), [['iso-in', [], ['10.0.0.2']]]);
  });

  it('null when something is added, reordered, or nothing is removed', () => {
    assert.equal(shrinkOnlyDelta(table(['a'], []), table(['a', 'b'], [])), null);
    assert.equal(shrinkOnlyDelta(table(['a', 'b'], []), table(['b', 'a'], [])), null);
    assert.equal(shrinkOnlyDelta(table(['a', 'b'], []), table(['a', 'b'], ['10.0.0.3'])), null);
  });
});

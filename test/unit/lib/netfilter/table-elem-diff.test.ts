import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nftExpr } from '../../../../lib/netfilter/expr.ts';
import { formatKeyBytes } from '../../../../lib/netfilter/nfnl/key-codec.ts';
import { diffTable, taggedRule, type TableContent, type TableSet } from '../../../../lib/netfilter/table-diff.ts';
import { elementDeltaBatch, elementOnlyDelta, parseElementKey } from '../../../../lib/netfilter/table-elem-diff.ts';

const ref = { family: 'inet', name: 'weft-t' } as const;

function content(o: { pods?: string[]; named?: string[]; block?: string[]; rules?: number[]; counters?: string[] } = {}): TableContent {
  const sets = new Map<string, TableSet>([
    ['s-1', { spec: { type: 'ipv4_addr' }, elements: new Set(o.pods ?? ['10.0.0.1']) }],
    ['n-1', { spec: { type: ['ipv4_addr', 'inet_proto', 'inet_service'] }, elements: new Set(o.named ?? []) }],
    ['b-1', { spec: { type: 'ipv4_addr', flags: ['interval'] }, elements: new Set(o.block ?? ['10.9.0.0/16']) }],
  ]);
  const chains = new Map([
    ['c-1', { rules: (o.rules ?? [80]).map((r) => taggedRule(nftExpr`ip saddr @s-1 tcp dport ${r} accept`, 'p')) }],
    ['base-1', { base: { type: 'filter' as const, hook: 'forward' as const, priority: 0, policy: 'accept' as const }, rules: [taggedRule(nftExpr`jump c-1`, 'j')] }],
  ]);
  return { sets, chains, counters: new Set(o.counters ?? ['k-1']) };
}

void describe('elementOnlyDelta', () => {
  it('nothing differs: an empty delta', () => {
    assert.deepEqual(elementOnlyDelta(content(), content()), []);
  });

  it('elements of plain and concatenated sets: adds and deletes per set, other sets left out', () => {
    const d = elementOnlyDelta(content({ pods: ['10.0.0.1', '10.0.0.2'] }), content({ pods: ['10.0.0.2', '10.0.0.3'], named: ['10.0.0.3 . tcp . 8080'] }));
    assert.deepEqual(d, [
      { set: 's-1', type: 'ipv4_addr', add: ['10.0.0.3'], del: ['10.0.0.1'] },
      { set: 'n-1', type: ['ipv4_addr', 'inet_proto', 'inet_service'], add: ['10.0.0.3 . tcp . 8080'], del: [] },
    ]);
  });

  it('null for anything nft must write: a rule, an interval set, a counter, a set or chain added', () => {
    assert.equal(elementOnlyDelta(content(), content({ rules: [81] })), null);
    assert.equal(elementOnlyDelta(content(), content({ block: ['10.8.0.0/16'] })), null);
    assert.equal(elementOnlyDelta(content(), content({ counters: ['k-2'] })), null);
    const more = content();
    (more.sets as Map<string, TableSet>).set('s-2', { spec: { type: 'ipv4_addr' }, elements: new Set() });
    assert.equal(elementOnlyDelta(content(), more), null);
    const less = content();
    (less.chains as Map<string, unknown>).delete('c-1');
    assert.equal(elementOnlyDelta(content(), less), null);
  });

  it('too many changes at once go to nft (null); adds are split into messages of 200', () => {
    const many = Array.from({ length: 2001 }, (_, i) => `10.1.${i >> 8}.${i & 255}`);
    assert.equal(elementOnlyDelta(content(), content({ pods: ['10.0.0.1', ...many] })), null);
    const d = elementOnlyDelta(content(), content({ pods: ['10.0.0.1', ...many.slice(0, 450)] }));
    assert.equal(d?.[0]?.add.length, 450);
    assert.equal(elementDeltaBatch(ref, d ?? []).size, 3);
  });

  it('a delta names the same changes as the nft script of diffTable', () => {
    const held = content({ pods: ['10.0.0.1'] });
    const want = content({ pods: ['10.0.0.4'] });
    const lines = diffTable(ref, held, want).script.trim().split('\n');
    assert.deepEqual(lines, ['delete element inet weft-t s-1 { 10.0.0.1 }', 'add element inet weft-t s-1 { 10.0.0.4 }']);
    assert.deepEqual(elementOnlyDelta(held, want), [{ set: 's-1', type: 'ipv4_addr', add: ['10.0.0.4'], del: ['10.0.0.1'] }]);
  });
});

void describe('elementDeltaBatch', () => {
  it('parses formatted keys back to atoms', () => {
    assert.deepEqual(parseElementKey('10.0.0.3 . tcp . 8080'), ['10.0.0.3', 'tcp', '8080']);
    assert.deepEqual(parseElementKey('fd00::1'), ['fd00::1']);
  });

  it('one delete command per element, then one add per set; keys encoded as the set type', () => {
    const b = elementDeltaBatch(ref, [{ set: 'n-1', type: ['ipv4_addr', 'inet_proto', 'inet_service'], add: ['10.0.0.3 . tcp . 8080'], del: ['10.0.0.1 . udp . 53', '10.0.0.2 . udp . 53'] }]);
    assert.equal(b.size, 3);
    assert.deepEqual([...formatKeyBytes(['ipv4_addr', 'inet_proto', 'inet_service'], parseElementKey('10.0.0.3 . tcp . 8080'))], [10, 0, 0, 3, 6, 0, 0, 0, 0x1f, 0x90, 0, 0]);
  });

  it('a key the set type refuses throws before anything is sent', () => {
    assert.throws(() => elementDeltaBatch(ref, [{ set: 's-1', type: 'ipv4_addr', add: ['fd00::1'], del: [] }]), /IPv4/);
  });
});

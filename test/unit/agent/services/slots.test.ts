import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assignSlots, slotCapacity } from '../../../../agent/services/slots.ts';
import { slotRules } from '../../../../agent/services/render.ts';

void describe('services endpoint slots', () => {
  it('capacity: a power of two holding n, kept while n stays within [c/2, c]', () => {
    assert.deepEqual([1, 2, 3, 8, 9, 10_000].map((n) => slotCapacity(n)), [1, 2, 4, 8, 16, 16_384]);
    assert.equal(slotCapacity(8, 16), 16);
    assert.equal(slotCapacity(7, 16), 8);
    assert.equal(slotCapacity(17, 16), 32);
    assert.equal(slotCapacity(1, 2), 2);
    assert.equal(slotCapacity(0, 4), 1);
  });

  it('endpoints that stay keep their slot; new ones fill the holes; the top slots go', () => {
    const have = new Map([[0, 'a'], [1, 'b'], [2, 'c'], [3, 'd']]);
    const r = assignSlots(['d', 'a', 'e'], have);
    assert.deepEqual([...r.slots].sort(), [[0, 'a'], [1, 'd'], [2, 'e']].sort());
    assert.deepEqual(r.ops, [{ op: 'delete', slot: 1 }, { op: 'delete', slot: 2 }, { op: 'delete', slot: 3 }, { op: 'add', slot: 1, endpoint: 'd' }, { op: 'add', slot: 2, endpoint: 'e' }]);
    assert.deepEqual(assignSlots(['a', 'b', 'c', 'd'], have).ops, []);
    assert.deepEqual(assignSlots([], have).ops.length, 4);
    const grown = assignSlots(['a', 'b', 'c', 'd', 'x'], have);
    assert.deepEqual(grown.ops, [{ op: 'add', slot: 4, endpoint: 'x' }]);
  });

  it('every slot below n is filled, so the last rule (mod capacity/2) always hits', () => {
    for (const [n, prev] of [[5, 8], [9, 16], [3, 4], [1, 2]] as const) {
      const have = new Map(Array.from({ length: prev }, (_, i) => [i, `e${i}`] as [number, string]));
      const { slots } = assignSlots(Array.from({ length: n }, (_, i) => `e${prev - 1 - i}`), have);
      const cap = slotCapacity(n, prev);
      assert.deepEqual([...slots.keys()].sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i));
      assert.ok(n >= cap / 2);
      const rules = slotRules('tcp', 4, 'm', cap);
      assert.match(rules.at(-1) ?? '', new RegExp(`mod ${Math.max(1, cap / 2)} map @m$`));
    }
    assert.deepEqual(slotRules('udp', 6, 'm', 1), ['meta l4proto udp dnat ip6 to numgen random mod 1 map @m']);
  });
});

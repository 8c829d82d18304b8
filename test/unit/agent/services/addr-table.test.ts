import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeRng } from '../../../fuzz/prng.ts';
import { AddrTable, IntTable } from '../../../../agent/services/addr-table.ts';

test('IntTable agrees with a Map through 200,000 random sets and deletes (growing, shrinking, colliding keys)', () => {
  const r = makeRng(7).next;
  const t = new IntTable();
  const m = new Map<number, number>();
  // Keys from a narrow range collide and form long probe runs; 0 and negative keys are ordinary keys.
  const key = () => (r() < 0.5 ? Math.floor(r() * 5000) - 100 : (Math.floor(r() * 2 ** 32) | 0));
  for (let step = 0; step < 200_000; step++) {
    // A first half that mostly adds, a second that mostly deletes: the table grows, then shrinks.
    const adding = r() < (step < 100_000 ? 0.8 : 0.2);
    const k = adding ? key() : [...m.keys()][Math.floor(r() * m.size)] ?? key();
    if (adding) {
      const v = 1 + Math.floor(r() * 0x7ffffffe);
      t.set(k, v);
      m.set(k, v);
    } else assert.equal(t.delete(k), m.delete(k));
    if (step % 5000 === 0) for (const [mk, mv] of m) assert.equal(t.get(mk), mv, `key ${mk} at step ${step}`);
  }
  assert.equal(t.size, m.size);
  for (const [k, v] of m) assert.equal(t.get(k), v);
  for (let i = 0; i < 1000; i++) {
    const k = key();
    assert.equal(t.get(k), m.get(k));
  }
});

test('IntTable: every key findable after deletes in the middle of probe runs', () => {
  const t = new IntTable();
  // 10.0.0.0/20 as numbers: consecutive keys, the shape of a cluster's pod addresses.
  const base = (10 << 24) | 0;
  for (let i = 0; i < 4096; i++) t.set(base + i, i + 1);
  for (let i = 0; i < 4096; i += 3) assert.equal(t.delete(base + i), true);
  for (let i = 0; i < 4096; i++) assert.equal(t.get(base + i), i % 3 === 0 ? undefined : i + 1, `key ${i}`);
  assert.equal(t.delete(base + 0), false);
  t.clear();
  assert.equal(t.size, 0);
  assert.equal(t.get(base + 1), undefined);
});

test('IntTable refuses values it cannot store (0 marks an empty slot)', () => {
  const t = new IntTable();
  for (const v of [0, -1, 2 ** 31, 1.5, Number.NaN]) assert.throws(() => t.set(1, v), RangeError, String(v));
  assert.equal(t.size, 0);
});

test('AddrTable keeps numbers and text apart: 167772161 and "10.0.0.1" are different keys', () => {
  const a = new AddrTable();
  a.set(167772161, 3);
  a.set('10.0.0.1', 4);
  a.set('fd00::1', 5);
  assert.equal(a.size, 3);
  assert.equal(a.get(167772161), 3);
  assert.equal(a.get('10.0.0.1'), 4);
  assert.equal(a.delete('fd00::1'), true);
  assert.equal(a.get('fd00::1'), undefined);
  assert.equal(a.size, 2);
  a.clear();
  assert.equal(a.size, 0);
});

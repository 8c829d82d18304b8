import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeRng } from '../../../fuzz/prng.ts';
import { ListedPairs, ListedSlots } from '../../../../agent/services/listed.ts';

test('ListedPairs is a Map of its elements through 20,000 random sets and deletes of every kind of key', () => {
  const r = makeRng(11).next;
  const ip = () => `10.${Math.floor(r() * 4)}.${Math.floor(r() * 256)}.${Math.floor(r() * 256)}`;
  const key = (): string => {
    const x = r();
    if (x < 0.6) { const a = ip(); return `${a} . ${a}`; }
    if (x < 0.7) return `${ip()} . ${ip()}`; // two addresses: kept as text
    if (x < 0.8) return `fd00::${Math.floor(r() * 300).toString(16)} . fd00::${Math.floor(r() * 300).toString(16)}`;
    if (x < 0.9) return '010.0.0.1 . 010.0.0.1'; // not canonical: as text, never confused with 10.0.0.1
    return '255.255.255.255 . 255.255.255.255';
  };
  const p = new ListedPairs();
  const m = new Map<string, string>();
  for (let i = 0; i < 20_000; i++) {
    const k = r() < 0.5 && m.size > 0 ? ([...m.keys()][Math.floor(r() * m.size)] ?? key()) : key();
    if (r() < 0.6) {
      const v = r() < 0.9 ? '' : 'x';
      p.set(k, v);
      m.set(k, v);
    } else assert.equal(p.delete(k), m.delete(k), `delete ${k}`);
  }
  assert.equal(p.size, m.size);
  assert.deepEqual(new Map(p), m);
  assert.deepEqual(new Set(p.keys()), new Set(m.keys()));
  for (const k of m.keys()) assert.equal(p.has(k), true, k);
  assert.equal(p.get('10.0.0.1 . 10.0.0.1') === undefined, !m.has('10.0.0.1 . 10.0.0.1'));
  let n = 0;
  p.forEach(() => n++);
  assert.equal(n, m.size);
  p.clear();
  assert.equal(p.size, 0);
  assert.deepEqual([...p], []);
});

test('ListedSlots gives each key its slots as a Map, IPv4 endpoints packed or not', () => {
  const s = new ListedSlots();
  s.note('ep4t/10.96.0.1 . 80', 0, '10.244.1.5 . 8080');
  s.note('ep4t/10.96.0.1 . 80', 2, '10.244.1.6 . 8080');
  s.note('ep6t/fd00::1 . 80', 0, 'fd00:10::5 . 8080');
  s.note('ep4u/10.96.0.2 . 53', 1, '10.244.2.9 . 53');
  s.note('ep4u/10.96.0.2 . 53', 0, '10.244.02.9 . 53'); // not canonical: that key's slots become text
  s.note('ep4t/10.96.0.3 . 443', 3, '255.255.255.255 . 65535');
  s.note('ep4t/10.96.0.3 . 443', 0, '0.0.0.0 . 0');
  assert.equal(s.size, 4);
  assert.deepEqual(s.get('ep4t/10.96.0.1 . 80'), new Map([[0, '10.244.1.5 . 8080'], [2, '10.244.1.6 . 8080']]));
  assert.deepEqual(s.get('ep6t/fd00::1 . 80'), new Map([[0, 'fd00:10::5 . 8080']]));
  assert.deepEqual(s.get('ep4u/10.96.0.2 . 53'), new Map([[1, '10.244.2.9 . 53'], [0, '10.244.02.9 . 53']]));
  assert.deepEqual(s.get('ep4t/10.96.0.3 . 443'), new Map([[3, '255.255.255.255 . 65535'], [0, '0.0.0.0 . 0']]));
  assert.equal(s.get('ep4t/nope'), undefined);
  // A Map handed out is a copy: changing it changes nothing held.
  s.get('ep4t/10.96.0.1 . 80')?.delete(0);
  assert.equal(s.get('ep4t/10.96.0.1 . 80')?.size, 2);
  assert.deepEqual(new Set(s.keys()), new Set(['ep4t/10.96.0.1 . 80', 'ep6t/fd00::1 . 80', 'ep4u/10.96.0.2 . 53', 'ep4t/10.96.0.3 . 443']));
  assert.deepEqual(new Map(s).get('ep6t/fd00::1 . 80'), new Map([[0, 'fd00:10::5 . 8080']]));
  assert.equal(s.delete('ep6t/fd00::1 . 80'), true);
  assert.equal(s.has('ep6t/fd00::1 . 80'), false);
  s.set('ep4t/10.96.0.9 . 80', new Map([[0, '10.1.1.1 . 1']]));
  assert.deepEqual(s.get('ep4t/10.96.0.9 . 80'), new Map([[0, '10.1.1.1 . 1']]));
  assert.equal(s.size, 4);
  s.clear();
  assert.equal(s.size, 0);
});

// The Service benchmarks' per-round ratio (scripts/bench/services-bulk.ts): a path against its baseline round by round, no root.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { perRoundRatio } from '../../../../scripts/bench/services-bulk.ts';

void test('perRoundRatio: the median of the rounds\' ratios, not the ratio of the medians', () => {
  // Rounds where the machine slowed both paths alike: each round's ratio is 0.9, the medians' ratio is not.
  const a = [9, 18, 27, 36, 4.5];
  const b = [10, 20, 30, 40, 5];
  assert.equal(perRoundRatio(a, b), 0.9);
  // Per round 0.5, 2 and 0.75: the median 0.75, where the medians' ratio (20 / 20) would say 1.
  assert.equal(perRoundRatio([10, 20, 30], [20, 10, 40]), 0.75);
  assert.equal(perRoundRatio([1, 2, 3, 4], [1, 1, 1, 1]), 2);
});

void test('perRoundRatio: a round without a baseline or with a zero baseline is left out', () => {
  assert.equal(perRoundRatio([2, 4, 6], [1, 0]), 2);
  assert.ok(Number.isNaN(perRoundRatio([], [])));
});

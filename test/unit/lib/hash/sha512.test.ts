// The plain-JS SHA-512 against node:crypto on lengths around the block boundaries, and a FIPS vector.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { sha512Hex } from '../../../../lib/hash/sha512.ts';

test('FIPS 180-4 example "abc"', () => {
  assert.equal(sha512Hex('abc'), 'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f');
});

test('equals node:crypto for lengths 0..300 and non-ASCII text', () => {
  for (let n = 0; n <= 300; n++) {
    const s = 'k8s-pod-network'.repeat(30).slice(0, n);
    assert.equal(sha512Hex(s), createHash('sha512').update(s, 'utf8').digest('hex'), `length ${n}`);
  }
  assert.equal(sha512Hex('réseau✓'), createHash('sha512').update('réseau✓', 'utf8').digest('hex'));
});

// parseDigits against the regular expressions it replaces (prefix lengths, version parts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isLowerHex, parseDigits } from '../../../../lib/text/digits.ts';
import { parseVersion } from '../../../../lib/cni/version.ts';

const samples = ['', '0', '00', '01', '7', '10', '32', '99', '100', '128', '129', '999', '1000', '0000', '12345', '-1', '+1', '1 ', ' 1', '1.', 'a', '1e2', '０', '0x1', '٣'];

test('parseDigits reads exactly what the replaced patterns accepted', () => {
  const patterns: Array<[RegExp, number, boolean]> = [[/^(0|[1-9][0-9]{0,2})$/, 3, false], [/^(0|[1-9][0-9]?)$/, 2, false], [/^\d{1,3}$/, 3, true], [/^\d{1,4}$/, 4, true]];
  for (const [re, max, lz] of patterns) {
    for (const s of samples) assert.equal(parseDigits(s, max, lz), re.test(s) ? Number(s) : null, `${re} ${JSON.stringify(s)}`);
  }
});

test('parseVersion reads what /^(\\d{1,4})\\.(\\d{1,4})\\.(\\d{1,4})$/ read', () => {
  const re = /^(\d{1,4})\.(\d{1,4})\.(\d{1,4})$/;
  for (const v of ['1.0.0', '0.3.1', '1.1.0', '10.20.30', '1.0', '1.0.0.0', '1..0', '01.0.0', '12345.0.0', 'a.b.c', '1.0.0 ', '', '..', '1.0.0-rc1', '9999.9999.9999']) {
    const m = re.exec(v);
    assert.deepEqual(parseVersion(v), m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined, JSON.stringify(v));
  }
});

test('isLowerHex accepts exactly /^[0-9a-f]{N}$/', () => {
  for (const s of ['', 'ab', 'a'.repeat(64), 'A'.repeat(64), '0123456789abcdef'.repeat(4), 'g'.repeat(64), `${'a'.repeat(63)}G`, 'a'.repeat(65)]) {
    assert.equal(isLowerHex(s, 64), /^[0-9a-f]{64}$/.test(s), JSON.stringify(s));
  }
});

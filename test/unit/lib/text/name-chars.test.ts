// isNameBreakingChar against the character class it replaces, for every UTF-16 code unit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasNameBreakingChar, isNameBreakingChar, isPlainName } from '../../../../lib/text/name-chars.ts';

// eslint-disable-next-line no-control-regex
const CLASS = /[/:\s\x00-\x1f\x7f]/;

test('every code unit is refused exactly when /[/:\\s\\x00-\\x1f\\x7f]/ matches it', () => {
  for (let c = 0; c <= 0xffff; c++) assert.equal(isNameBreakingChar(c), CLASS.test(String.fromCharCode(c)), `U+${c.toString(16)}`);
});

test('a string is refused when any of its characters is', () => {
  for (const s of ['', 'eth0', 'a b', 'a:b', 'a/b', 'x\u3000', '\u00a0', 'cni0', 'é', 'a\x7f']) assert.equal(hasNameBreakingChar(s), CLASS.test(s), JSON.stringify(s));
});

test('isPlainName accepts exactly /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/', () => {
  const re = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;
  const chars = ['a', 'Z', '0', '9', '_', '.', '-', '/', ' ', 'é', ':', '@', '`', '[', '{', '\u212a'];
  let seed = 5;
  for (let n = 0; n < 4000; n++) {
    let s = '';
    for (let i = 0; i < n % 5; i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      s += chars[seed % chars.length] ?? '';
    }
    assert.equal(isPlainName(s), re.test(s), JSON.stringify(s));
  }
});

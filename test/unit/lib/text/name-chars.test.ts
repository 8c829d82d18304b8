// isNameBreakingChar against the character class it replaces, for every UTF-16 code unit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasNameBreakingChar, isNameBreakingChar } from '../../../../lib/text/name-chars.ts';

// eslint-disable-next-line no-control-regex
const CLASS = /[/:\s\x00-\x1f\x7f]/;

test('every code unit is refused exactly when /[/:\\s\\x00-\\x1f\\x7f]/ matches it', () => {
  for (let c = 0; c <= 0xffff; c++) assert.equal(isNameBreakingChar(c), CLASS.test(String.fromCharCode(c)), `U+${c.toString(16)}`);
});

test('a string is refused when any of its characters is', () => {
  for (const s of ['', 'eth0', 'a b', 'a:b', 'a/b', 'x\u3000', '\u00a0', 'cni0', 'é', 'a\x7f']) assert.equal(hasNameBreakingChar(s), CLASS.test(s), JSON.stringify(s));
});

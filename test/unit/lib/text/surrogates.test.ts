// hasLoneSurrogate against the regular expression it replaces, on hand-picked and random strings.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasLoneSurrogate } from '../../../../lib/text/surrogates.ts';

const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

test('lone surrogates are found where the look-around expression finds them', () => {
  const cases = ['', 'eth0', 'net/ipv4/ip_forward', '\ud83d\ude00', 'a\ud83d\ude00b', '\ud800', '\udc00', 'x\ud800', '\udc00x',
    '\ud800\ud800\udc00', '\ud800\udc00\udc00', '\udc00\ud800', '\ud83d', 'é\u2028\uffff'];
  for (const s of cases) assert.equal(hasLoneSurrogate(s), LONE.test(s), JSON.stringify(s));
  const units = [0x61, 0xd7ff, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xe000, 0x2f];
  let seed = 7;
  for (let n = 0; n < 2000; n++) {
    let s = '';
    const len = n % 7;
    for (let i = 0; i < len; i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      s += String.fromCharCode(units[seed % units.length] ?? 0x61);
    }
    assert.equal(hasLoneSurrogate(s), LONE.test(s), JSON.stringify(s));
  }
});

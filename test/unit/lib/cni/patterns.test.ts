// The character-loop matchers of lib/cni/patterns.ts accept exactly what their patterns accept (the
// regular expressions ajv would have built, "u" flag), and the generated validators use them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isColonMac, isDottedTriple, isPlainName, PATTERN_MATCHERS } from '../../../../lib/cni/patterns.ts';
import { generateValidator } from '../../../../scripts/gen-validators.ts';
import { bridgeSchema } from '../../../../plugins/bridge/schema.ts';

const MATCHERS: Record<string, (s: string) => boolean> = { isDottedTriple, isPlainName, isColonMac };

// Edge cases of each pattern's grammar, plus strings a `$` or a class could mishandle.
const SAMPLES = [
  '', '0', '1.0', '1.0.0', '0.4.0', '10.20.30', '1.0.0.0', '1..0', '.1.0', '1.0.', '1.0.0\n', '\n1.0.0', ' 1.0.0', '1.0.0 ',
  '１.0.0', '1.0.0a', 'a1.0.0', '١.0.0', '1.0-0', 'cbr0', 'my-net_1.x', '-x', '_x', '.x', 'x/y', 'x..y', 'x y', 'x\u0000', 'A', 'é',
  'K', 'kelvin\u212a', 'net\n', '00:11:22:33:44:55', 'aA:bB:cC:dD:eE:fF', '00:11:22:33:44', '00:11:22:33:44:55:66', '00-11-22-33-44-55',
  '0:11:22:33:44:55', '00:11:22:33:44:5g', '00:11:22:33:44:55\n', 'G0:11:22:33:44:55', '0011:22:33:44:55:', '00:11:22:33:44:ff',
  '\ud83d\ude00', 'x'.repeat(300),
];

describe('pattern matchers', () => {
  for (const [source, name] of Object.entries(PATTERN_MATCHERS)) {
    it(`${name} accepts what /${source}/u accepts`, () => {
      const re = new RegExp(source, 'u');
      const match = MATCHERS[name];
      assert.ok(match !== undefined, name);
      for (const s of SAMPLES) assert.equal(match(s), re.test(s), `${name}(${JSON.stringify(s)})`);
      // Every string of up to 3 characters over the pattern's alphabet and its neighbours.
      const alphabet = ['0', '9', 'a', 'f', 'g', 'A', 'F', 'Z', '.', ':', '-', '_', '/', '\n'];
      const short = [''];
      for (let n = 0; n < 3; n++) for (const s of [...short]) for (const c of alphabet) short.push(s + c);
      for (const s of short) assert.equal(match(s), re.test(s), `${name}(${JSON.stringify(s)})`);
    });
  }

  it('the generated validators call the matchers instead of building RegExps for known patterns', () => {
    const js = generateValidator({ name: 'bridge', schema: bridgeSchema }, './patterns.ts');
    assert.doesNotMatch(js, /new RegExp/);
    assert.match(js, /^import \{ [^}]*isColonMac as __weftPattern_isColonMac[^}]*\} from "\.\/patterns\.ts";$/m);
  });

  it('a pattern without a matcher stays a RegExp', () => {
    const js = generateValidator({ name: 'x', schema: { type: 'string', pattern: '^[0-9./]+$' } }, './patterns.ts');
    assert.match(js, /new RegExp\("\^\[0-9\.\/\]\+\$", "u"\)/);
    assert.doesNotMatch(js, /__weftPattern/);
  });

  it('a module for gen/validators imports lib/cni/patterns.ts relative to it', () => {
    const js = generateValidator({ name: 'bridge', schema: bridgeSchema });
    assert.match(js, /from "\.\.\/\.\.\/lib\/cni\/patterns\.ts";/);
  });
});

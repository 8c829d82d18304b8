// nftExpr: literals from code, interpolated values validated one by one.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NftError } from '../../../../lib/netfilter/errors.ts';
import { nftExpr } from '../../../../lib/netfilter/expr.ts';

describe('nftExpr', () => {
  it('renders atoms, names and anonymous sets', () => {
    const e = nftExpr`ip saddr @${'pods-cbr0'} ip daddr != ${['10.244.0.0/16', '224.0.0.0/4']} masquerade`;
    assert.equal(e.text, 'ip saddr @pods-cbr0 ip daddr != { 10.244.0.0/16, 224.0.0.0/4 } masquerade');
  });
  it('nests expressions', () => {
    const inner = nftExpr`meta mark & ${0x4000} == ${0x4000}`;
    assert.equal(nftExpr`${inner} return`.text, 'meta mark & 16384 == 16384 return');
  });
  it('refuses injection through a value', () => {
    for (const bad of ['x; flush ruleset', '1.2.3.4 accept', 'pods\nflush ruleset', '"x"'])
      assert.throws(() => nftExpr`ip saddr ${bad} accept`, (e: unknown) => e instanceof NftError && e.kind === 'invalid');
  });
  it('refuses literals that would split the transaction line', () => {
    assert.throws(() => nftExpr`accept; flush ruleset`, NftError);
    assert.throws(() => nftExpr`accept comment "x"`, NftError);
  });
});

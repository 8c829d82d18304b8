// NftBatch script generation: golden scripts, state-dependent steps rendered against a given listing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NftBatch } from '../../../../lib/netfilter/batch.ts';
import { NftError } from '../../../../lib/netfilter/errors.ts';
import { nftExpr } from '../../../../lib/netfilter/expr.ts';
import type { NftTableState } from '../../../../lib/netfilter/types.ts';

const T = { family: 'inet', name: 'weft' } as const;
const MASQ = nftExpr`ip saddr @${'pods-cbr0'} ip daddr != ${'10.244.0.0/16'} masquerade`;

function stateWith(rules: { handle: number; comment?: string }[], sets: string[] = []): NftTableState {
  return {
    family: 'inet',
    name: 'weft',
    handle: 1,
    sets: new Map(sets.map((n) => [n, { name: n, kind: 'set' as const, handle: 9, type: ['ipv4_addr'], flags: [], elements: [] }])),
    chains: new Map([['masq-post', { name: 'masq-post', handle: 2, rules: rules.map((r) => ({ ...r, expr: [] })) }]]),
  };
}

describe('NftBatch golden scripts', () => {
  it('table, base chain, set, map, elements', () => {
    const script = new NftBatch(T)
      .ensureTable()
      .ensureChain('masq-post', { type: 'nat', hook: 'postrouting', priority: 'srcnat', policy: 'accept' })
      .ensureChain('portmap-pre', { type: 'nat', hook: 'prerouting', priority: -100 })
      .ensureChain('helper-1')
      .ensureSet('pods-cbr0', { type: 'ipv4_addr', flags: ['interval'], comment: 'network cbr0' })
      .ensureMap('portmap-4', { type: ['inet_proto', 'inet_service'], data: ['ipv4_addr', 'inet_service'] })
      .ensureMap('vmap-1', { type: 'ipv4_addr', data: 'verdict' })
      .addElement('pods-cbr0', '10.244.0.5', { comment: 'ctr1' })
      .addElement('portmap-4', ['tcp', 8080], { comment: 'ctr1', data: ['10.244.0.5', 80] })
      .addElement('vmap-1', '10.0.0.1', { data: 'jump helper-1' })
      .flushSet('pods-cbr0')
      .render();
    assert.equal(
      script,
      [
        'add table inet weft',
        'add chain inet weft masq-post { type nat hook postrouting priority srcnat; policy accept; }',
        'add chain inet weft portmap-pre { type nat hook prerouting priority -100; }',
        'add chain inet weft helper-1',
        'add set inet weft pods-cbr0 { type ipv4_addr; flags interval; comment "network cbr0"; }',
        'add map inet weft portmap-4 { type inet_proto . inet_service : ipv4_addr . inet_service; }',
        'add map inet weft vmap-1 { type ipv4_addr : verdict; }',
        'add element inet weft pods-cbr0 { 10.244.0.5 comment "ctr1" }',
        'add element inet weft portmap-4 { tcp . 8080 comment "ctr1" : 10.244.0.5 . 80 }',
        'add element inet weft vmap-1 { 10.0.0.1 : jump helper-1 }',
        'flush set inet weft pods-cbr0',
        '',
      ].join('\n'),
    );
  });

  it('deleteElement adds then deletes, so an absent element does not fail the transaction', () => {
    const script = new NftBatch(T).deleteElement('pods-cbr0', '10.244.0.5').deleteElement('portmap-4', ['udp', 53], { data: ['10.244.0.5', 53] }).render();
    assert.equal(
      script,
      'add element inet weft pods-cbr0 { 10.244.0.5 }\ndelete element inet weft pods-cbr0 { 10.244.0.5 }\n' +
        'add element inet weft portmap-4 { udp . 53 : 10.244.0.5 . 53 }\ndelete element inet weft portmap-4 { udp . 53 }\n',
    );
  });

  it('deleteTable is add-then-delete', () => {
    assert.equal(new NftBatch({ family: 'ip6', name: 'weft' }).deleteTable().render(), 'add table ip6 weft\ndelete table ip6 weft\n');
  });

  it('an empty batch renders nothing', () => assert.equal(new NftBatch(T).render(), ''));
});

describe('NftBatch state-dependent steps', () => {
  it('refuses to render without a state', () => {
    assert.throws(() => new NftBatch(T).ensureRule('masq-post', MASQ, 'masq-cbr0').render(), NftError);
  });
  it('adds a tagged rule when the table is absent, once per batch', () => {
    const b = new NftBatch(T).ensureRule('masq-post', MASQ, 'masq-cbr0').ensureRule('masq-post', MASQ, 'masq-cbr0');
    assert.equal(b.render(null), 'add rule inet weft masq-post ip saddr @pods-cbr0 ip daddr != 10.244.0.0/16 masquerade comment "masq-cbr0"\n');
  });
  it('skips a present tag and deletes duplicates by handle', () => {
    const b = new NftBatch(T).ensureRule('masq-post', MASQ, 'masq-cbr0');
    assert.equal(b.render(stateWith([{ handle: 4, comment: 'masq-cbr0' }, { handle: 5 }])), '');
    assert.equal(b.render(stateWith([{ handle: 4, comment: 'masq-cbr0' }, { handle: 7, comment: 'masq-cbr0' }])), 'delete rule inet weft masq-post handle 7\n');
  });
  it('replaces older versions of a rule by tag prefix', () => {
    const b = new NftBatch(T).ensureRule('masq-post', MASQ, 'masq-cbr0:v2', { replaces: 'masq-cbr0:' });
    assert.equal(
      b.render(stateWith([{ handle: 4, comment: 'masq-cbr0:v1' }, { handle: 6, comment: 'masq-cbr01:v1' }])),
      'delete rule inet weft masq-post handle 4\nadd rule inet weft masq-post ip saddr @pods-cbr0 ip daddr != 10.244.0.0/16 masquerade comment "masq-cbr0:v2"\n',
    );
  });
  it('a flush earlier in the batch makes the tag absent again', () => {
    const b = new NftBatch(T).flushChain('masq-post').ensureRule('masq-post', MASQ, 'masq-cbr0');
    assert.match(b.render(stateWith([{ handle: 4, comment: 'masq-cbr0' }])), /^flush chain inet weft masq-post\nadd rule /);
  });
  it('deleteRulesByTag, deleteChain and deleteSet only touch what exists', () => {
    const b = new NftBatch(T).deleteRulesByTag('masq-post', 'masq-cbr0').deleteChain('masq-post').deleteChain('gone-1').deleteSet('pods-cbr0').deleteSet('gone-2');
    assert.equal(b.render(null), '');
    assert.equal(
      b.render(stateWith([{ handle: 4, comment: 'masq-cbr0' }], ['pods-cbr0'])),
      'delete rule inet weft masq-post handle 4\nflush chain inet weft masq-post\ndelete chain inet weft masq-post\ndelete set inet weft pods-cbr0\n',
    );
  });
  it('validates eagerly: a bad value throws when the step is added', () => {
    assert.throws(() => new NftBatch(T).addElement('pods-cbr0', '10.0.0.1', { comment: 'x" }; flush ruleset; #' }), NftError);
    assert.throws(() => new NftBatch(T).ensureRule('masq-post', MASQ, 'tag"'), NftError);
    assert.throws(() => new NftBatch({ family: 'inet', name: 'ip' }), NftError);
    assert.throws(() => new NftBatch(T).ensureSet('s-1', { type: 'ipv4_addr; flush ruleset' as 'ipv4_addr' }), NftError);
    assert.throws(() => new NftBatch(T).ensureChain('c-1', { type: 'nat', hook: 'postrouting', priority: 'srcnat + 1' as 'srcnat' }), NftError);
  });
});

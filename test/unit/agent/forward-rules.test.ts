import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FORWARD_TAG, normalizeForwardNets, planForwardRules, wantedForwardRules, type ForwardChainRules } from '../../../agent/forward-rules.ts';
import type { NfnlBaseChain } from '../../../lib/netfilter/nfnl/chains.ts';

const nets = { network4: '10.244.0.0/16', network6: 'fd00:10:244::/48' };
const chain = (o: Partial<NfnlBaseChain>): NfnlBaseChain => ({ family: 'ip', table: 'filter', name: 'FORWARD', type: 'filter', hook: 'forward', priority: 0, policy: 'drop', ...o });
const ours = (family: NfnlBaseChain['family'], first = 10n) => wantedForwardRules(family, nets).map((w, i) => ({ handle: first + BigInt(i), comment: w.comment }));

void describe('forward accepts', () => {
  it('iptables -P FORWARD DROP: two accepts appended to ip filter FORWARD (from and to the Network)', () => {
    const lines = planForwardRules([{ chain: chain({}), rules: [{ handle: 2n, comment: 'DOCKER-USER' }, { handle: 3n }] }], nets, true);
    assert.deepEqual(lines, [
      `add rule ip filter FORWARD ip saddr 10.244.0.0/16 counter accept comment "${FORWARD_TAG}: from 10.244.0.0/16"`,
      `add rule ip filter FORWARD ip daddr 10.244.0.0/16 counter accept comment "${FORWARD_TAG}: to 10.244.0.0/16"`,
    ]);
  });

  it('a native inet chain gets both families; ip6 only IPv6; no IPv6Network: IPv4 only', () => {
    assert.equal(planForwardRules([{ chain: chain({ family: 'inet', name: 'forward' }), rules: [] }], nets, true).length, 4);
    const v6 = planForwardRules([{ chain: chain({ family: 'ip6' }), rules: [] }], nets, true);
    assert.deepEqual(v6.map((l) => l.split(' ').slice(5, 7).join(' ')), ['ip6 saddr', 'ip6 daddr']);
    assert.deepEqual(planForwardRules([{ chain: chain({ family: 'ip6' }), rules: [] }], { network4: nets.network4 }, true), []);
  });

  it('already in place: nothing, so a resync spawns no nft and the rule count stays constant', () => {
    const cs: ForwardChainRules[] = [{ chain: chain({}), rules: [{ handle: 1n }, ...ours('ip')] }, { chain: chain({ family: 'inet', table: 'host', name: 'fwd' }), rules: ours('inet') }];
    assert.deepEqual(planForwardRules(cs, nets, true), []);
  });

  it('a duplicate, a stale network or a missing half is rewritten (only weftd\'s rules deleted, by handle)', () => {
    const dup = planForwardRules([{ chain: chain({}), rules: [...ours('ip'), { handle: 30n, comment: `${FORWARD_TAG}: from 10.244.0.0/16` }] }], nets, true);
    assert.deepEqual(dup.filter((l) => l.startsWith('delete')), ['delete rule ip filter FORWARD handle 10', 'delete rule ip filter FORWARD handle 11', 'delete rule ip filter FORWARD handle 30']);
    assert.equal(dup.filter((l) => l.startsWith('add')).length, 2);
    const stale = planForwardRules([{ chain: chain({}), rules: [{ handle: 5n, comment: `${FORWARD_TAG}: from 10.99.0.0/16` }, { handle: 6n, comment: 'flanneld forward' }] }], nets, true);
    assert.deepEqual(stale.slice(0, 1), ['delete rule ip filter FORWARD handle 5']);
    assert.equal(stale.length, 3);
  });

  it('off, or the policy back to accept: weftd\'s rules go, others stay', () => {
    const c: ForwardChainRules = { chain: chain({}), rules: [{ handle: 1n, comment: 'mine' }, ...ours('ip')] };
    assert.deepEqual(planForwardRules([c], nets, false), ['delete rule ip filter FORWARD handle 10', 'delete rule ip filter FORWARD handle 11']);
    assert.equal(planForwardRules([{ ...c, chain: chain({ policy: 'accept' }) }], nets, true).length, 2);
    assert.deepEqual(planForwardRules([{ chain: chain({ policy: 'accept' }), rules: [] }], nets, true), []);
  });

  it('weft\'s own tables, other hooks, nat chains, bridge tables and unsafe names are never touched', () => {
    for (const c of [chain({ table: 'weft' }), chain({ table: 'weft-policy', family: 'inet' }), chain({ hook: 'input' }), chain({ type: 'nat' }), chain({ family: 'bridge' }), chain({ name: 'x"; flush ruleset' })]) {
      assert.deepEqual(planForwardRules([{ chain: c, rules: [] }], nets, true), [], JSON.stringify(c));
    }
  });

  it('networks are validated before anything is written', () => {
    assert.deepEqual(normalizeForwardNets({ network4: '10.244.0.0/16', network6: 'FD00:10:244::/48' }), { network4: '10.244.0.0/16', network6: 'fd00:10:244::/48' });
    assert.throws(() => normalizeForwardNets({ network4: 'fd00::/48' }), /IPv4 CIDR/);
    assert.throws(() => normalizeForwardNets({ network4: '10.0.0.1' }), /IPv4 CIDR/);
    assert.throws(() => normalizeForwardNets({ network6: '10.0.0.0/8' }), /IPv6 CIDR/);
  });
});

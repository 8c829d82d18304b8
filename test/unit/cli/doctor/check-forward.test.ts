import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkForward } from '../../../../cli/doctor/check-forward.ts';
import { wantedForwardRules, type ForwardChainRules } from '../../../../agent/forward-rules.ts';
import type { NfnlBaseChain } from '../../../../lib/netfilter/nfnl/chains.ts';

const nets = { network4: '10.244.0.0/16' };
const chain = (o: Partial<NfnlBaseChain> = {}): NfnlBaseChain => ({ family: 'ip', table: 'filter', name: 'FORWARD', type: 'filter', hook: 'forward', priority: 0, policy: 'drop', ...o });
const weftds = (c: NfnlBaseChain) => wantedForwardRules(c.family, nets).map((w, i) => ({ handle: BigInt(i + 5), comment: w.comment }));

void describe('doctor check forward', () => {
  it('iptables -P FORWARD DROP without accepts: named, with the flag and the nft rules as fix', () => {
    const r = checkForward([{ chain: chain(), rules: [{ handle: 1n, comment: 'DOCKER-USER' }] }], nets);
    assert.equal(r.problems.length, 1);
    assert.match(r.problems[0]?.detail ?? '', /^ip filter FORWARD has policy drop .*from 10\.244\.0\.0\/16, to 10\.244\.0\.0\/16/);
    assert.match(r.problems[0]?.fix ?? '', /--iptables-forward-rules.*nft add rule ip filter FORWARD ip saddr 10\.244\.0\.0\/16 counter accept/);
    assert.equal(r.facts['dropChains'], 'ip filter FORWARD');
  });

  it('a native inet chain with policy drop is named too; half of the accepts is still a problem', () => {
    const c = chain({ family: 'inet', table: 'host', name: 'forward' });
    const half = weftds(c).slice(0, 1);
    const r = checkForward([{ chain: c, rules: half }], nets);
    assert.match(r.problems[0]?.detail ?? '', /^inet host forward .*to 10\.244\.0\.0\/16/);
  });

  it('weftd\'s or flanneld\'s accepts in place, policy accept, weft\'s own table, another family: no problem', () => {
    const cases: ForwardChainRules[] = [
      { chain: chain(), rules: weftds(chain()) },
      { chain: chain(), rules: [{ handle: 3n, comment: 'flanneld forward' }] },
      { chain: chain({ policy: 'accept' }), rules: [] },
      { chain: chain({ table: 'weft', family: 'inet' }), rules: [] },
      { chain: chain({ family: 'ip6' }), rules: [] },
    ];
    for (const c of cases) assert.deepEqual(checkForward([c], nets).problems, [], JSON.stringify(c.chain));
  });
});

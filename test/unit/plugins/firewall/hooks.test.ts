import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NfnlBaseChain } from '../../../../lib/netfilter/nfnl/chains.ts';
import { formatHookLines, hookRuleBody, selectForwardChains } from '../../../../plugins/firewall/hooks.ts';

const chain = (over: Partial<NfnlBaseChain>): NfnlBaseChain => ({ family: 'ip', table: 'filter', name: 'FORWARD', type: 'filter', hook: 'forward', priority: 0, policy: 'drop', ...over });

describe('firewall hooks into other forward chains', () => {
  it('selects filter chains at the forward hook of ip, ip6 and inet tables other than weft', () => {
    const got = selectForwardChains([
      chain({}),
      chain({ family: 'ip6' }),
      chain({ family: 'inet', table: 'filter', name: 'forward' }),
      chain({ family: 'inet', table: 'weft', name: 'fw-isolation' }),
      chain({ family: 'bridge', table: 'filter', name: 'forward' }),
      chain({ hook: 'input', name: 'INPUT' }),
      chain({ type: 'nat', hook: 'forward', name: 'x' }),
    ]);
    assert.deepEqual(got.map((c) => `${c.family} ${c.table} ${c.chain}`), ['ip filter FORWARD', 'ip6 filter FORWARD', 'inet filter forward']);
  });

  it('leaves chains outside the marking window (before -160 or from 300 on) and odd names alone', () => {
    const got = selectForwardChains([chain({ priority: -160 }), chain({ priority: -200 }), chain({ priority: 300 }), chain({ priority: 299, name: 'ok' }), chain({ name: 'bad name' })]);
    assert.deepEqual(got.map((c) => c.chain), ['ok']);
  });

  it('inserts only into chains not hooked yet, with a rule iptables-nft can list', () => {
    const lines = formatHookLines([
      { family: 'ip', table: 'filter', chain: 'FORWARD', prio: 0, policy: 'drop', hooked: false },
      { family: 'inet', table: 'filter', chain: 'forward', prio: 0, policy: 'drop', hooked: true },
    ]);
    assert.deepEqual(lines, [`insert rule ip filter FORWARD ${hookRuleBody()}`]);
    assert.equal(hookRuleBody(), 'meta mark & 0x00100000 == 0x00100000 counter accept comment "weft-firewall"');
  });
});

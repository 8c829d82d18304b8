// The rendered transaction: fixed chains and rules, one `add element` per planned element, so the
// rule count never depends on pods or mappings.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NftBatch } from '../../../../lib/netfilter/batch.ts';
import { WEFT_TABLE } from '../../../../lib/netfilter/table.ts';
import { ensurePortmapRuleset, portmapRules } from '../../../../plugins/portmap/ruleset.ts';

function script(pods: number, mappingsPerPod: number): string {
  const b = ensurePortmapRuleset(new NftBatch(WEFT_TABLE));
  for (let p = 0; p < pods; p++) {
    for (let m = 0; m < mappingsPerPod; m++) {
      b.addElement('portmap-dnat4', ['tcp', 10000 + p * 100 + m], { comment: `ctr-${p}/eth0`, data: [`10.244.0.${p + 2}`, 80 + m] });
    }
  }
  return b.render(null);
}

const count = (s: string, re: RegExp) => s.split('\n').filter((l) => re.test(l)).length;

describe('ensurePortmapRuleset', () => {
  it('rewrites its four chains with ten rules in one transaction, whatever the number of elements', () => {
    const one = script(1, 1);
    const many = script(20, 5);
    assert.equal(count(one, /^add rule /), 10);
    assert.equal(count(many, /^add rule /), count(one, /^add rule /));
    assert.equal(count(many, /^add element /), 100);
    assert.equal(count(one, /^flush chain inet weft portmap-(pre|out|dnat|post)$/), 4);
    assert.equal(portmapRules().length, 10);
  });

  it('hooks: dstnat prerouting, output at -100, srcnat postrouting; only local destinations jump to the maps', () => {
    const s = script(1, 1);
    assert.match(s, /add chain inet weft portmap-pre \{ type nat hook prerouting priority dstnat; policy accept; \}/);
    assert.match(s, /add chain inet weft portmap-out \{ type nat hook output priority -100; policy accept; \}/);
    assert.match(s, /add chain inet weft portmap-post \{ type nat hook postrouting priority srcnat; policy accept; \}/);
    assert.match(s, /add rule inet weft portmap-pre fib daddr type local jump portmap-dnat/);
    assert.match(s, /add rule inet weft portmap-dnat meta nfproto ipv6 dnat ip6 to meta l4proto \. th dport map @portmap-dnat6/);
    assert.match(s, /add set inet weft portmap-snat4 \{ type ipv4_addr \. ipv4_addr \. inet_proto \. inet_service; flags interval;/);
  });
});

// weftd's ip-masq chain against the kernel, in a namespace created by the test.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { IPMASQ_CHAIN, ensureIpMasq, teardownIpMasq } from '../../../agent/ip-masq.ts';
import { WEFT_TABLE, listTable } from '../../../lib/netfilter/index.ts';
import type { NftRunOptions } from '../../../lib/netfilter/index.ts';
import { createTestNetns, rootOnly, type TestNetns } from '../../../testkit/netns.ts';

describe('weftd ip-masq', rootOnly(), () => {
  let ns: TestNetns;
  let o: NftRunOptions;
  before(async () => {
    ns = await createTestNetns('weft-t-nftr');
    o = { netnsPath: ns.path };
  });
  after(async () => {
    await ns.destroy();
  });

  it('ip-masq: kube-proxy mark, pod-to-pod return, outbound masquerade; rebuilt not duplicated', async () => {
    ensureIpMasq({ network4: '10.244.0.0/16' }, o);
    ensureIpMasq({ network4: '10.244.0.0/16', network6: 'fd00:244::/56' }, o);
    const rules = listTable(WEFT_TABLE, o)?.chains.get(IPMASQ_CHAIN)?.rules ?? [];
    assert.deepEqual(rules.map((r) => r.comment), ['ipmasq kube-proxy-mark', 'ipmasq v4 pod-to-pod', 'ipmasq v4 outbound', 'ipmasq v6 pod-to-pod', 'ipmasq v6 outbound']);
    const text = (await ns.exec(['nft', 'list', 'chain', 'inet', 'weft', IPMASQ_CHAIN])).stdout;
    assert.match(text, /meta mark & 0x00004000 == 0x00004000 return/);
    assert.match(text, /ip saddr 10\.244\.0\.0\/16 ip daddr != 224\.0\.0\.0\/4 masquerade fully-random/);
    teardownIpMasq(o);
    teardownIpMasq(o);
    assert.equal(listTable(WEFT_TABLE, o)?.chains.has(IPMASQ_CHAIN), false);
  });

  it('refuses values that are not what they claim', () => {
    assert.throws(() => ensureIpMasq({ network4: 'fd00::/64' }, o));
    assert.throws(() => ensureIpMasq({ network6: '10.244.0.0/16' }, o));
    assert.throws(() => ensureIpMasq({ network4: '10.244.0.0/16; flush ruleset' }, o));
  });
});

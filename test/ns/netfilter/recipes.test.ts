// Bridge masquerade and weftd ip-masq recipes against the kernel, in a namespace created by the test.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  IPMASQ_CHAIN,
  MASQ_CHAIN,
  WEFT_TABLE,
  ensureIpMasq,
  listTable,
  masqNames,
  setupPodMasquerade,
  teardownIpMasq,
  teardownPodMasquerade,
} from '../../../lib/netfilter/index.ts';
import type { NftRunOptions } from '../../../lib/netfilter/index.ts';
import { createTestNetns, rootOnly, type TestNetns } from '../../helpers/netns.ts';

describe('bridge masquerade and ip-masq recipes', rootOnly(), () => {
  let ns: TestNetns;
  let o: NftRunOptions;
  before(async () => {
    ns = await createTestNetns('weft-t-nftr');
    o = { netnsPath: ns.path };
  });
  after(async () => {
    await ns.destroy();
  });
  const n = masqNames('cbr0');
  const masqRules = () => listTable(WEFT_TABLE, o)?.chains.get(MASQ_CHAIN)?.rules ?? [];

  it('dual-stack pods: one rule per family, one element per IP, tagged with the container ID', async () => {
    for (let i = 2; i < 12; i++) {
      const spec = { network: 'cbr0', subnets: ['10.244.0.0/24', 'fd00:244::/64'], podIps: [`10.244.0.${i}/24`, `fd00:244::${i}/64`], containerId: `ctr-${i}` };
      setupPodMasquerade(spec, o);
      setupPodMasquerade(spec, o); // a repeated ADD changes nothing
    }
    const t = listTable(WEFT_TABLE, o);
    assert.equal(masqRules().length, 2);
    assert.equal(t?.sets.get(n.set4)?.elements.length, 10);
    assert.equal(t?.sets.get(n.set6)?.elements.length, 10);
    const text = (await ns.exec(['nft', 'list', 'chain', 'inet', 'weft', MASQ_CHAIN])).stdout;
    assert.match(text, new RegExp(`ip saddr @${n.set4} ip daddr != \\{ 10\\.244\\.0\\.0/24, 224\\.0\\.0\\.0/4 \\} masquerade`));
    assert.match(text, new RegExp(`ip6 saddr @${n.set6} ip6 daddr != \\{ fd00:244::/64, ff00::/8 \\} masquerade`));
  });

  it('a changed subnet list replaces the rule instead of adding one', () => {
    setupPodMasquerade({ network: 'cbr0', subnets: ['10.244.0.0/23', 'fd00:244::/64'], podIps: ['10.244.1.2'], containerId: 'ctr-x' }, o);
    const rules = masqRules();
    assert.equal(rules.length, 2);
    assert.equal(JSON.stringify(rules).includes('"len":23'), true);
  });

  it('DEL by container ID alone removes both families; a second DEL succeeds', () => {
    teardownPodMasquerade({ network: 'cbr0', containerId: 'ctr-5' }, o);
    teardownPodMasquerade({ network: 'cbr0', containerId: 'ctr-5' }, o);
    const t = listTable(WEFT_TABLE, o);
    for (const set of [n.set4, n.set6]) {
      const els = t?.sets.get(set)?.elements ?? [];
      assert.equal(els.some((e) => e.comment === 'ctr-5'), false);
      assert.ok(els.length >= 9);
    }
    teardownPodMasquerade({ network: 'other-net', containerId: 'ctr-6' }, o); // unknown network: nothing to do
  });

  it('ip-masq: kube-proxy mark, pod-to-pod return, outbound masquerade; rebuilt not duplicated', async () => {
    ensureIpMasq({ network4: '10.244.0.0/16' }, o);
    ensureIpMasq({ network4: '10.244.0.0/16', network6: 'fd00:244::/56' }, o);
    const rules = listTable(WEFT_TABLE, o)?.chains.get(IPMASQ_CHAIN)?.rules ?? [];
    assert.deepEqual(rules.map((r) => r.comment), ['ipmasq kube-proxy-mark', 'ipmasq v4 pod-to-pod', 'ipmasq v4 outbound', 'ipmasq v6 pod-to-pod', 'ipmasq v6 outbound']);
    const text = (await ns.exec(['nft', 'list', 'chain', 'inet', 'weft', IPMASQ_CHAIN])).stdout;
    assert.match(text, /meta mark & 0x00004000 == 0x00004000 return/);
    assert.match(text, /ip saddr 10\.244\.0\.0\/16 ip daddr != 224\.0\.0\.0\/4 masquerade fully-random/);
    assert.equal(masqRules().length, 2, 'the bridge chain is untouched');
    teardownIpMasq(o);
    teardownIpMasq(o);
    assert.equal(listTable(WEFT_TABLE, o)?.chains.has(IPMASQ_CHAIN), false);
  });

  it('refuses values that are not what they claim', () => {
    assert.throws(() => ensureIpMasq({ network4: 'fd00::/64' }, o));
    assert.throws(() => setupPodMasquerade({ network: 'cbr0', subnets: [], podIps: ['10.0.0.1; flush ruleset'], containerId: 'c-1' }, o));
    assert.throws(() => setupPodMasquerade({ network: 'cbr0', subnets: [], podIps: ['10.0.0.1'], containerId: 'bad"id' }, o));
  });
});

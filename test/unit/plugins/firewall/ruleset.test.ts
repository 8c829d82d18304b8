import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bridgeKeys, podKey, resultIps, selectElems } from '../../../../plugins/firewall/elements.ts';
import { elementComment, fwNetworkNames } from '../../../../plugins/firewall/names.ts';
import { firewallRules, formatRulesetScript } from '../../../../plugins/firewall/ruleset.ts';

describe('firewall rule set', () => {
  it('is a fixed list of rules per network: pods are set elements, never rules', () => {
    const rules = firewallRules('podman');
    assert.equal(rules.length, 8);
    const n = fwNetworkNames('podman');
    assert.ok(rules.some((r) => r.chain === n.chain && r.expr.text.includes(`@${n.pods4}`)));
    assert.notDeepEqual(fwNetworkNames('podman'), fwNetworkNames('other'));
  });

  it('rewrites the chains weft owns but never flushes the admin chain', () => {
    const s = formatRulesetScript('podman', 'CNI-ADMIN');
    const n = fwNetworkNames('podman');
    assert.match(s, new RegExp(`flush chain inet weft ${n.chain}\\n`));
    assert.doesNotMatch(s, /flush chain inet weft CNI-ADMIN/);
    assert.match(s, /add chain inet weft CNI-ADMIN\n/);
    // The admin jump comes before the marking rules of the network chain.
    assert.ok(s.indexOf(`add rule inet weft ${n.chain} jump CNI-ADMIN`) < s.indexOf(`add rule inet weft ${n.chain} ip saddr`));
    assert.match(s, /type filter hook forward priority -160; policy accept;/);
  });

  it('takes every address of prevResult, canonical and once', () => {
    const ips = resultIps({ cniVersion: '1.0.0', ips: [{ address: '10.88.0.5/16' }, { address: 'FD00::0005/64' }, { address: '10.88.0.5/16' }] } as never);
    assert.deepEqual(ips, ['10.88.0.5', 'fd00::5']);
  });

  it('puts each family in its own set: 4-byte and 16-byte keys', () => {
    const n = fwNetworkNames('podman');
    assert.deepEqual([podKey('podman', '10.88.0.5').set, podKey('podman', '10.88.0.5').key.length], [n.pods4, 4]);
    assert.deepEqual([podKey('podman', 'fd00::5').set, podKey('podman', 'fd00::5').key.length], [n.pods6, 16]);
  });

  it('selects elements by comment and never picks uncommented ones', () => {
    const k = new Uint8Array([10, 0, 0, 1]);
    const listed = [{ set: 's', elems: [{ key: k, flags: 0, comment: 'a/eth0' }, { key: k, flags: 0 }, { key: k, flags: 0, comment: 'b/eth0' }] }];
    assert.deepEqual(selectElems(listed, (c) => c === 'a/eth0')[0]?.elems.map((e) => e.comment), ['a/eth0']);
    assert.deepEqual(selectElems(listed, (c) => c !== 'a/eth0')[0]?.elems.map((e) => e.comment), ['b/eth0']);
  });

  it('element comments: the attachment, hashed when nft would refuse it', () => {
    assert.equal(elementComment('abc', 'eth0'), 'abc/eth0');
    assert.match(elementComment('x'.repeat(200), 'eth0'), /^h:[0-9a-f]{16}$/);
  });

  it('isolation keys are NUL-padded interface names, the pair twice the name', () => {
    const k = bridgeKeys('cni0');
    assert.equal(k.isolated.length, 16);
    assert.equal(k.same.length, 32);
    assert.equal(Buffer.from(k.same.subarray(16, 20)).toString(), 'cni0');
    assert.throws(() => bridgeKeys('a/b'));
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeWeftdFlags, weftdCommand, type RawFlags } from '../../../../agent/flags.ts';

function parse(argv: string[]): RawFlags {
  const c = weftdCommand('0.0.0').exitOverride();
  c.parse(argv, { from: 'user' });
  return c.opts<RawFlags>();
}

void describe('weftd --network-policy', () => {
  it('is off by default and carries the kube connection flags when on', () => {
    assert.equal(normalizeWeftdFlags(parse(['--net-conf', '/n.json'])).networkPolicy, undefined);
    const o = normalizeWeftdFlags(parse(['--net-conf', '/n.json', '--network-policy', '--kubeconfig-file', '/k', '--kube-api-url', 'https://a:6443']));
    assert.deepEqual(o.networkPolicy, { kubeconfigFile: '/k', kubeApiUrl: 'https://a:6443' });
    assert.deepEqual(normalizeWeftdFlags(parse(['--net-conf', '/n.json', '--network-policy'])).networkPolicy, {});
  });
});

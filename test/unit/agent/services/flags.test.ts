import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeWeftdFlags, weftdCommand, type RawFlags } from '../../../../agent/flags.ts';

function parse(argv: string[]): RawFlags {
  const c = weftdCommand('0.0.0').exitOverride();
  c.parse(argv, { from: 'user' });
  return c.opts<RawFlags>();
}

void describe('weftd --service-proxy flags', () => {
  it('off by default; on with NODE_NAME and validated --nodeport-addresses', () => {
    assert.equal(normalizeWeftdFlags(parse(['--net-conf', '/x'])).serviceProxy, undefined);
    const o = normalizeWeftdFlags(parse(['--net-conf', '/x', '--service-proxy', '--nodeport-addresses', '192.0.2.0/24, 2001:db8::/64', '--kubeconfig-file', '/k']), { NODE_NAME: 'n1' });
    assert.deepEqual(o.serviceProxy, { nodeName: 'n1', nodePortAddresses: ['192.0.2.0/24', '2001:db8::/64'], kubeconfigFile: '/k' });
  });

  it('refuses a missing NODE_NAME, a bad CIDR, and --nodeport-addresses alone', () => {
    assert.throws(() => normalizeWeftdFlags(parse(['--net-conf', '/x', '--service-proxy']), {}), /NODE_NAME/);
    assert.throws(() => normalizeWeftdFlags(parse(['--net-conf', '/x', '--service-proxy', '--nodeport-addresses', '192.0.2.1']), { NODE_NAME: 'n' }), /--nodeport-addresses "192\.0\.2\.1"/);
    assert.throws(() => normalizeWeftdFlags(parse(['--net-conf', '/x', '--nodeport-addresses', '192.0.2.0/24']), { NODE_NAME: 'n' }), /needs --service-proxy/);
  });
});

// Which networks --ip-masq covers for a net-conf (flannel's SetupAndEnsureMasqRules: Network and IPv6Network).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeNetConf } from '../../../agent/config/net-conf.ts';
import { masqNetworks } from '../../../agent/ip-masq.ts';

void describe('masqNetworks', () => {
  void it('IPv4 only, dual stack, IPv6-only', () => {
    assert.deepEqual(masqNetworks(normalizeNetConf({ Network: '10.244.0.0/16' })), { network4: '10.244.0.0/16' });
    assert.deepEqual(masqNetworks(normalizeNetConf({ Network: '10.244.0.0/16', EnableIPv6: true, IPv6Network: 'fd00:10:244::/56' })),
      { network4: '10.244.0.0/16', network6: 'fd00:10:244::/56' });
    assert.deepEqual(masqNetworks(normalizeNetConf({ Network: '10.244.0.0/16', EnableIPv6: false, IPv6Network: 'fd00:10:244::/56' })), { network4: '10.244.0.0/16' });
    assert.deepEqual(masqNetworks(normalizeNetConf({ EnableIPv4: false, EnableIPv6: true, IPv6Network: 'fd00::/48' })), { network6: 'fd00::/48' });
  });
});

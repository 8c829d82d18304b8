// What `weft install` writes with its defaults matches the conflists documented in conf/.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFAULTS, defaultNetworkName } from '../../../../cli/install/options.ts';
import { renderConflist } from '../../../../cli/install/render.ts';

const CONF = join(import.meta.dirname, '..', '..', '..', '..', 'conf');
const EMPTY = join(import.meta.dirname, 'no-such-conf-dir');

test('bridge: byte-identical to conf/weft-bridge.conflist', () => {
  assert.equal(renderConflist({ backend: 'bridge', networkName: defaultNetworkName('bridge', EMPTY), network: DEFAULTS.network }), readFileSync(join(CONF, 'weft-bridge.conflist'), 'utf8'));
});

for (const backend of ['flannel-vxlan', 'host-gw', 'flannel-udp'] as const) {
  test(`${backend}: byte-identical to conf/10-flannel.conflist (flannel's own type, whatever weftd's backend)`, () => {
    assert.equal(renderConflist({ backend, networkName: defaultNetworkName(backend, EMPTY), network: DEFAULTS.network }), readFileSync(join(CONF, '10-flannel.conflist'), 'utf8'));
  });
}

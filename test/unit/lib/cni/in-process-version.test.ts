// An in-process delegate runs only when the bundle found on CNI_PATH declares the registered plugin's
// version (lib/cni/delegate.ts), and the build stamps every bundle with package.json's version
// (lib/version.ts). A plugin object whose version lags a release bump would silently turn every
// flannel or bridge ADD back into two Node.js starts: each delegate registered by an entry point
// must carry WEFT_VERSION.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { hostLocalPlugin } from '../../../../ipam/host-local/plugin.ts';
import { WEFT_VERSION } from '../../../../lib/version.ts';
import { bridgePlugin } from '../../../../plugins/bridge/plugin.ts';
import { flannelPlugin } from '../../../../plugins/flannel/plugin.ts';

void it('the plugins registered in-process (bridge, host-local) and flannel carry the bundles\' version', () => {
  for (const p of [bridgePlugin, hostLocalPlugin, flannelPlugin]) assert.equal(p.version, WEFT_VERSION, p.name);
});

// Entry point of dist/bin/flannel: wiring only. In-process delegates: bridge and host-local (the
// rendered delegate and its IPAM), when CNI_PATH holds our bundles of them; others are exec'd.
import { hostLocalPlugin } from '../../ipam/host-local/plugin.ts';
import { registerInProcess } from '../../lib/cni/delegate.ts';
import { pluginMain } from '../../lib/cni/skel.ts';
import { bridgePlugin } from '../bridge/plugin.ts';
import { flannelPlugin } from './plugin.ts';

registerInProcess('bridge', bridgePlugin);
registerInProcess('host-local', hostLocalPlugin);
void pluginMain(flannelPlugin);

// Entry point of dist/bin/bridge: wiring only. In-process delegate: host-local (IPAM), when CNI_PATH
// holds our bundle of it; any other IPAM plugin is exec'd as the spec says.
import { hostLocalPlugin } from '../../ipam/host-local/plugin.ts';
import { registerInProcess } from '../../lib/cni/delegate.ts';
import { pluginMain } from '../../lib/cni/skel.ts';
import { bridgePlugin } from './plugin.ts';

registerInProcess('host-local', hostLocalPlugin);
void pluginMain(bridgePlugin);

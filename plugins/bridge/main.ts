// Entry point of dist/bin/bridge: wiring only.
import { pluginMain } from '../../lib/cni/skel.ts';
import { bridgePlugin } from './plugin.ts';

void pluginMain(bridgePlugin);

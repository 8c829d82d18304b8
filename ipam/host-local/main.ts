// Entry point of dist/bin/host-local: wiring only.
import { pluginMain } from '../../lib/cni/skel.ts';
import { hostLocalPlugin } from './plugin.ts';

void pluginMain(hostLocalPlugin);

// Entry point of dist/bin/host-gw: wiring only.
import { pluginMain } from '../../lib/cni/skel.ts';
import { hostGwPlugin } from './plugin.ts';

void pluginMain(hostGwPlugin);

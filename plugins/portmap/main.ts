// Entry point of dist/bin/portmap: wiring only.
import { pluginMain } from '../../lib/cni/skel.ts';
import { portmapPlugin } from './plugin.ts';

void pluginMain(portmapPlugin);

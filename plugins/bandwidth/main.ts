// Entry point of dist/bin/bandwidth: wiring only.
import { pluginMain } from '../../lib/cni/skel.ts';
import { bandwidthPlugin } from './plugin.ts';

void pluginMain(bandwidthPlugin);

// Entry point of dist/bin/flannel-vxlan: wiring only.
import { pluginMain } from '../../lib/cni/skel.ts';
import { flannelVxlanPlugin } from './plugin.ts';

void pluginMain(flannelVxlanPlugin);

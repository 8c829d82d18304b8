// Entry point of dist/bin/flannel: wiring only.
import { pluginMain } from '../../lib/cni/skel.ts';
import { flannelPlugin } from './plugin.ts';

void pluginMain(flannelPlugin);

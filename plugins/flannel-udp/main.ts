// Entry point of dist/bin/flannel-udp: wiring only.
import { pluginMain } from '../../lib/cni/skel.ts';
import { flannelUdpPlugin } from './plugin.ts';

void pluginMain(flannelUdpPlugin);

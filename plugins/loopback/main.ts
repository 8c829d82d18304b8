// Entry point of dist/bin/loopback: wiring only.
import { pluginMain } from '../../lib/cni/skel.ts';
import { loopbackPlugin } from './plugin.ts';

void pluginMain(loopbackPlugin);

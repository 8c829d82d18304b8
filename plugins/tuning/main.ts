// Entry point of dist/bin/tuning: wiring only.
import { pluginMain } from '../../lib/cni/skel.ts';
import { tuningPlugin } from './plugin.ts';

void pluginMain(tuningPlugin);

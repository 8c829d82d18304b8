// Entry point of dist/bin/firewall: wiring only.
import { pluginMain } from '../../lib/cni/skel.ts';
import { firewallPlugin } from './plugin.ts';

void pluginMain(firewallPlugin);

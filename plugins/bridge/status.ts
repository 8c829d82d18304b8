// STATUS (CNI 1.1), run in the runtime's (node's) netns: the bridge itself needs nothing beyond its
// config to serve an ADD, so it checks the config and asks its IPAM plugin, whose answer (host-local:
// code 50 when its data dir is unusable or a range set is full) is the bridge's, as in the
// reference bridge (plugins v1.6+).
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { parseBridgeConfig } from './config.ts';
import { ipamStatus } from './ipam.ts';

/** STATUS: code 7 for a config ADD would refuse, else the IPAM plugin's STATUS. */
export async function cmdStatus(a: CmdArgs): Promise<void> {
  await ipamStatus(a, parseBridgeConfig(a));
}

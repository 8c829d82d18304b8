// The bridge plugin object: handlers for the CNI verbs (exported so other bundles can run it in-process).
import type { Plugin } from '../../lib/cni/plugin.ts';
import { SUPPORTED_VERSIONS } from '../../lib/cni/types.ts';
import { cmdAdd, validateAdd } from './add.ts';
import { cmdCheck } from './check.ts';
import { cmdDel } from './del.ts';
import { cmdGc } from './gc.ts';
import { cmdStatus } from './status.ts';

/** bridge: veth pairs on a Linux bridge in the node netns, addresses from IPAM, optional nftables masquerade. */
export const bridgePlugin: Plugin = {
  name: 'bridge',
  version: '0.1.0',
  supportedVersions: SUPPORTED_VERSIONS,
  validateAdd: async (a) => { await validateAdd(a); },
  add: cmdAdd,
  del: cmdDel,
  check: cmdCheck,
  gc: cmdGc,
  status: cmdStatus,
};

// The firewall plugin object: handlers for the CNI verbs (exported so other bundles can run it in-process).
import type { Plugin } from '../../lib/cni/plugin.ts';
import { SUPPORTED_VERSIONS } from '../../lib/cni/types.ts';
import { cmdAdd } from './add.ts';
import { cmdCheck } from './check.ts';
import { cmdDel } from './del.ts';
import { cmdGc } from './gc.ts';

/** firewall: lets pod traffic through a node whose forward policy drops it, over nftables sets in the node netns. */
export const firewallPlugin: Plugin = {
  name: 'firewall',
  version: '0.1.0',
  supportedVersions: SUPPORTED_VERSIONS,
  add: cmdAdd,
  del: cmdDel,
  check: cmdCheck,
  gc: cmdGc,
};

// The bandwidth plugin object: handlers for the CNI verbs (exported so other bundles can run it in-process).
import type { Plugin } from '../../lib/cni/plugin.ts';
import { cmdAdd } from './add.ts';
import { cmdCheck } from './check.ts';
import { cmdDel } from './del.ts';
import { cmdGc } from './gc.ts';

/** bandwidth: tbf/htb shaping of a pod's traffic on its host veth and an ifb, in the node netns; chained after an interface plugin. */
export const bandwidthPlugin: Plugin = {
  name: 'bandwidth',
  version: '0.1.0',
  // The reference starts at 0.3.0: earlier results have no host-side interfaces to shape on.
  supportedVersions: ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'],
  add: cmdAdd,
  del: cmdDel,
  check: cmdCheck,
  gc: cmdGc,
};

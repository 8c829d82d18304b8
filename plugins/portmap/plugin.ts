// The portmap plugin object: handlers for the CNI verbs (exported so other bundles can run it in-process).
import type { Plugin } from '../../lib/cni/plugin.ts';
import { SUPPORTED_VERSIONS } from '../../lib/cni/types.ts';
import { cmdAdd } from './add.ts';
import { cmdCheck } from './check.ts';
import { cmdDel } from './del.ts';
import { cmdGc } from './gc.ts';

/** portmap: hostPort -> pod DNAT through nftables maps in the node netns; chained after an interface plugin. */
export const portmapPlugin: Plugin = {
  name: 'portmap',
  version: '0.1.0',
  supportedVersions: SUPPORTED_VERSIONS,
  add: cmdAdd,
  del: cmdDel,
  check: (a) => cmdCheck(a),
  gc: (a) => cmdGc(a),
};

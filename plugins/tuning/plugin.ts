// The tuning plugin object: handlers for the CNI verbs (exported so other bundles can run it in-process).
import type { Plugin } from '../../lib/cni/plugin.ts';
import { SUPPORTED_VERSIONS } from '../../lib/cni/types.ts';
import { cmdAdd } from './add.ts';
import { cmdCheck } from './check.ts';
import { cmdDel } from './del.ts';
import { cmdGc } from './gc.ts';

/** tuning: sysctls and link attributes of the pod interface, set in the pod netns; DEL restores them. */
export const tuningPlugin: Plugin = {
  name: 'tuning',
  version: '0.1.0',
  supportedVersions: SUPPORTED_VERSIONS,
  add: cmdAdd,
  del: cmdDel,
  check: cmdCheck,
  gc: cmdGc,
};

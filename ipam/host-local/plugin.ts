// The host-local plugin object, exported so bundles (bridge, flannel) can run it in-process as their IPAM.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Plugin } from '../../lib/cni/skel.ts';
import { SUPPORTED_VERSIONS } from '../../lib/cni/types.ts';
import { sys } from '../../lib/sys/index.ts';
import { cmdAdd, cmdCheck, cmdDel } from './commands.ts';
import type { OpenStore } from './commands.ts';
import { DiskStore } from './disk-store.ts';
import { cmdGc, cmdStatus } from './maintenance.ts';

/** The disk store with the native flock (loaded on first use, so VERSION never loads the addon). */
export const openDiskStore: OpenStore = (dataDir, name, create) => {
  // Without `create`, a missing network directory means nothing was ever reserved here.
  if (!create && !existsSync(join(dataDir, name))) return null;
  return new DiskStore(dataDir, name, (fd, op, nb) => sys().flock(fd, op, nb));
};

/** host-local with an injectable store opener (tests pass one over a memory store). */
export function makeHostLocalPlugin(open: OpenStore = openDiskStore): Plugin {
  return {
    name: 'host-local',
    version: '0.1.0',
    supportedVersions: SUPPORTED_VERSIONS,
    // The reference host-local's config struct has no prevResult: a malformed one is not its concern.
    prevResultOptional: true,
    add: (a) => cmdAdd(a, open),
    del: (a) => cmdDel(a, open),
    check: (a) => cmdCheck(a, open),
    status: (a) => cmdStatus(a, open),
    gc: (a) => cmdGc(a, open),
  };
}

/** host-local IPAM: files under <dataDir>/<network>/ in the reference's layout, flock-protected. */
export const hostLocalPlugin: Plugin = makeHostLocalPlugin();

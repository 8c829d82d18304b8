// The host-local plugin object, exported so bundles (bridge, flannel) can run it in-process as their IPAM.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Plugin } from '../../lib/cni/skel.ts';
import { SUPPORTED_VERSIONS } from '../../lib/cni/types.ts';
import { sys } from '../../lib/sys/index.ts';
import type { Env } from '../../lib/cni/plugin.ts';
import { stallTimeoutMs } from '../../lib/cni/stall.ts';
import { cmdAdd, cmdCheck, cmdDel, validateAdd } from './commands.ts';
import type { OpenStore } from './commands.ts';
import { DiskStore } from './disk-store.ts';
import { cmdGc, cmdStatus } from './maintenance.ts';

/** The disk store with the native flock (loaded on first use, so VERSION never loads the addon). */
export const openDiskStore: OpenStore = (dataDir, name, create, lockTimeoutMs) => {
  // Without `create`, a missing network directory means nothing was ever reserved here.
  if (!create && !existsSync(join(dataDir, name))) return null;
  return new DiskStore(dataDir, name, (fd, op, wait) => sys().flock(fd, op, wait), lockTimeoutMs);
};

/** `open` with the lock bound the invocation's env sets (WEFT_STALL_TIMEOUT_MS). */
function bounded(open: OpenStore, env: Env): OpenStore {
  const ms = stallTimeoutMs(env);
  return (dataDir, name, create) => open(dataDir, name, create, ms);
}

/** host-local with an injectable store opener (tests pass one over a memory store). */
export function makeHostLocalPlugin(open: OpenStore = openDiskStore): Plugin {
  return {
    name: 'host-local',
    version: '0.1.0',
    supportedVersions: SUPPORTED_VERSIONS,
    // The reference host-local's config struct has no prevResult: a malformed one is not its concern.
    prevResultOptional: true,
    validateAdd: (a) => void validateAdd(a),
    add: (a) => cmdAdd(a, bounded(open, a.env)),
    del: (a) => cmdDel(a, bounded(open, a.env)),
    check: (a) => cmdCheck(a, bounded(open, a.env)),
    status: (a) => cmdStatus(a, bounded(open, a.env)),
    gc: (a) => cmdGc(a, bounded(open, a.env)),
  };
}

/** host-local IPAM: files under <dataDir>/<network>/ in the reference's layout, flock-protected. */
export const hostLocalPlugin: Plugin = makeHostLocalPlugin();

// host-local STATUS and GC (CNI 1.1). Both run in the runtime's netns and need no container.
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { CmdArgs } from '../../lib/cni/skel.ts';
import { CniError, ErrorCode, invalidConfig } from '../../lib/cni/errors.ts';
import { collectGarbage } from './allocator.ts';
import type { Allocation } from './store.ts';
import { parseHostLocalConfig } from './config.ts';
import type { OpenStore } from './commands.ts';
import { rangeFor, rangeSetCapacity } from './range.ts';
import { errnoCode } from '../../lib/errno/errno.ts';

function unavailable(msg: string, details: string): CniError {
  return new CniError(ErrorCode.pluginNotAvailable, msg, details);
}

/** The nearest existing ancestor of `p` (the directory mkdir -p would start from). */
function existingAncestor(p: string): string {
  let cur = p;
  while (!existsSync(cur)) {
    const up = dirname(cur);
    if (up === cur) break;
    cur = up;
  }
  return cur;
}

function checkWritableDir(p: string): void {
  try {
    if (!statSync(p).isDirectory()) throw unavailable('host-local data dir is unusable', `${p} is not a directory`);
    accessSync(p, constants.W_OK | constants.X_OK);
  } catch (e) {
    if (e instanceof CniError) throw e;
    throw unavailable('host-local data dir is unusable', `${p}: ${errnoCode(e) ?? String(e)}`);
  }
}

/**
 * STATUS: code 50 unless the data dir can hold reservations (the network's directory, or the
 * nearest ancestor it would be created in, is a writable directory) and at least one range set
 * still has a free address (every ADD needs one from each set, so any full set blocks ADDs).
 * Creates nothing when the network's directory does not exist yet.
 */
export function cmdStatus(args: CmdArgs, open: OpenStore): void {
  const conf = parseHostLocalConfig(args.config, args.args);
  const dir = join(conf.dataDir, conf.name);
  if (!existsSync(dir)) return checkWritableDir(existingAncestor(dir));
  checkWritableDir(dir);
  let held: Allocation[];
  const store = open(conf.dataDir, conf.name, false);
  if (store === null) return;
  try {
    held = store.withLock(() => store.list());
  } finally {
    store.close();
  }
  conf.rangeSets.forEach((set, i) => {
    const used = held.filter((a) => {
      const r = rangeFor(set, a.ip);
      return r !== undefined && r.gateway.value !== a.ip.value;
    }).length;
    if (BigInt(used) >= rangeSetCapacity(set)) throw unavailable('host-local range set is full', `range set ${i} has no free address`);
  });
}

/**
 * GC (spec 1.1 "GC"): frees every reservation of this network whose (containerID, ifname) is not in
 * cni.dev/valid-attachments. A GC without that key is refused (code 7) rather than read as "none valid".
 */
export function cmdGc(args: CmdArgs, open: OpenStore): void {
  const conf = parseHostLocalConfig(args.config, args.args);
  if (conf.validAttachments === null) throw invalidConfig('invalid configuration: GC needs cni.dev/valid-attachments');
  const store = open(conf.dataDir, conf.name, false);
  if (store === null) return;
  try {
    collectGarbage(store, conf.validAttachments);
  } finally {
    store.close();
  }
}

// ADD: validate, save what will change, change it, report the new MAC. One rollback: restore the
// saved values and drop the state file, so a refused ADD leaves the pod as it was.
import { invalidConfig } from '../../lib/cni/errors.ts';
import { log } from '../../lib/cni/log.ts';
import { Rollback } from '../../lib/cni/rollback.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import type { Result } from '../../lib/cni/types.ts';
import { readFileSync } from 'node:fs';
import { parseTuningConfig, type TuningConfig } from './config.ts';
import { applyTuning, captureState, needsLink, restoreTuning, tunablesOf } from './link-state.ts';
import { openPodNetns } from '../../lib/pod/netns.ts';
import { isSysError } from '../../lib/errno/errno.ts';
import { inPod } from './pod.ts';
import { readState, removeState, statePath, writeState, type SavedState } from './state.ts';
import { checkAllowlist } from './sysctl-keys.ts';

/** The reference's sysctl allowlist file: when it exists, every key must match one of its lines. */
export const ALLOWLIST_PATH = '/etc/cni/tuning/allowlist.conf';

/** The chained plugin's input (reference: "Required prevResult missing"). */
export function requirePrevResult(a: CmdArgs): Result {
  if (a.prevResult === undefined) throw invalidConfig('tuning must be called as a chained plugin', 'prevResult is missing');
  return a.prevResult;
}

/** The allowlist lines; null when the file does not exist. */
export function readAllowlist(path = ALLOWLIST_PATH): string[] | null {
  try {
    return readFileSync(path, 'utf8').split('\n');
  } catch (e) {
    if (isSysError(e, 'ENOENT')) return null;
    throw e;
  }
}

/** prevResult with the MAC of every interface named `ifName` replaced (reference updateResultsMacAddr). Pure. */
export function withMac(prev: Result, ifName: string, mac: string | undefined): Result {
  if (mac === undefined || prev.interfaces === undefined) return prev;
  return { ...prev, interfaces: prev.interfaces.map((i) => (i.name === ifName ? { ...i, mac } : i)) };
}

function needsState(cfg: TuningConfig): boolean {
  return cfg.sysctls.length > 0 || cfg.mac !== undefined || cfg.promisc || cfg.mtu !== 0 || cfg.allmulti !== undefined || cfg.txQLen !== undefined;
}

/** Keeps the first ADD's originals: a repeated ADD must not save its own earlier changes as "before". */
export function mergeState(older: SavedState | null, now: SavedState): SavedState {
  if (older === null) return now;
  const merged: SavedState = { ...now, ...older, sysctl: { ...(now.sysctl ?? {}), ...(older.sysctl ?? {}) } };
  if (now.network !== undefined) merged.network = now.network;
  return merged;
}

/** ADD, in the pod netns (link and /proc/sys there); state file on the node's filesystem. */
export function cmdAdd(a: CmdArgs): Result {
  const cfg = parseTuningConfig(a);
  const prev = requirePrevResult(a);
  checkAllowlist(cfg.sysctls.map((s) => s.key), readAllowlist());
  if (!needsState(cfg)) return prev;
  const path = statePath(cfg.dataDir, a.containerId, a.ifName);
  const ns = openPodNetns(a.netns);
  try {
    // Unwound inside the pod netns: the sysctls restoreTuning writes are the pod's.
    inPod(ns, a.ifName, (rtnl, link) => new Rollback().runSync((rb) => {
      const saved = mergeState(readState(path), captureState(cfg, link === null ? null : tunablesOf(link)));
      writeState(path, cfg.dataDir, saved);
      rb.push(`state file ${path}`, () => removeState(path));
      const index = link?.index ?? null;
      rb.push(`tuning of ${a.ifName}`, () => {
        const failed = restoreTuning(rtnl, index, saved);
        if (failed.length > 0) log.warn('tuning ADD rollback incomplete', { failed: failed.join('; ') });
      });
      applyTuning(rtnl, index, cfg);
    }), !needsLink(cfg));
  } finally {
    ns.close();
  }
  return withMac(prev, a.ifName, cfg.mac);
}

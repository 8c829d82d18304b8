// DEL: put back what ADD saved, then forget it. Forgiving: no state, no netns or no link is success,
// and a value the kernel refuses is logged, never returned (DEL must not block a runtime's cleanup).
// Only the data dir is read, from a config ADD would refuse too: DEL never blocks cleanup.
import { log } from '../../lib/cni/log.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { decodeForDel } from '../../lib/cni/validate.ts';
import { validate } from '../../gen/validators/tuning.js';
import { dataDirOf } from './config.ts';
import { restoreTuning } from './link-state.ts';
import { isPodGone, openPodNetns } from '../../lib/pod/netns.ts';
import { inPod } from './pod.ts';
import { readState, removeState, statePath } from './state.ts';

/** DEL, in the pod netns when it still exists. */
export function cmdDel(a: CmdArgs): void {
  // Keys decoded as ADD decodes them (case-insensitive), no checks: a wrong type elsewhere must not keep the state.
  const c = decodeForDel(validate, a.config);
  let path: string;
  try {
    path = statePath(dataDirOf(c), a.containerId, a.ifName);
  } catch (e) {
    log.warn('tuning DEL: no usable state path', { error: (e as Error).message });
    return;
  }
  const saved = readState(path);
  if (saved === null) return removeState(path);
  if (a.netns !== '') {
    try {
      const ns = openPodNetns(a.netns);
      try {
        const failed = inPod(ns, a.ifName, (rtnl, link) => restoreTuning(rtnl, link?.index ?? null, saved), true);
        if (failed.length > 0) log.warn('tuning DEL: some values were not restored', { failed: failed.join('; ') });
      } finally {
        ns.close();
      }
    } catch (e) {
      if (!isPodGone(e)) log.warn('tuning DEL: restore failed', { error: (e as Error).message });
    }
  }
  removeState(path);
}

// CHECK: the live link and sysctls match the config (reference semantics: promisc checked both ways).
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { requirePrevResult } from './add.ts';
import { parseTuningConfig } from './config.ts';
import { checkFailed } from './errors.ts';
import { findTuningProblems, tunablesOf } from './link-state.ts';
import { openPodNetns } from '../../lib/pod/netns.ts';
import { inPod } from './pod.ts';

/** CHECK, in the pod netns: code 140 naming every difference. */
export function cmdCheck(a: CmdArgs): void {
  const cfg = parseTuningConfig(a);
  requirePrevResult(a);
  const ns = openPodNetns(a.netns);
  try {
    const problems = inPod(ns, a.ifName, (_rtnl, link) => (link === null ? [] : findTuningProblems(cfg, tunablesOf(link))));
    if (problems.length > 0) throw checkFailed(`tuning: CHECK failed for ${a.ifName}`, problems.join('; '));
  } finally {
    ns.close();
  }
}

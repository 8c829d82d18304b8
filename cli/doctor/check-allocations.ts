// Check "ipam": host-local allocations whose attachment has no host veth on the node (the pod's
// netns is gone and DEL never ran: a leaked address), with CNI GC as the repair. Pure.
import { isLive, type LiveAttachments } from '../../lib/attach/bridge-veth.ts';
import type { Allocation } from './allocations.ts';
import type { CheckResult, Problem } from './problem.ts';

/** Runs the check over the read allocations and live attachments. */
export function checkAllocations(dataDir: string, allocs: readonly Allocation[], live: LiveAttachments): CheckResult {
  const check = 'ipam';
  const problems: Problem[] = [];
  const leaked = allocs.filter((a) => !isLive(live, a.containerId, a.ifName));
  for (const a of leaked) {
    problems.push({
      check,
      detail: `address ${a.ip} (network ${a.network}) is held by ${a.containerId}/${a.ifName}, which has no interface on this node: leaked`,
      fix: `let the runtime run CNI GC for network ${a.network} (containerd and CRI-O do on restart), or, with the pod known gone: rm ${a.path}`,
    });
  }
  return { check, problems, facts: { dataDir, allocations: allocs.length, leaked: leaked.length } };
}

// ADD, in the node netns: shape traffic into the pod on its host veth and traffic out of it on an
// ifb its host veth redirects to. One rollback path removes whatever this ADD put in place.
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { Rollback } from '../../lib/cni/rollback.ts';
import type { Result } from '../../lib/cni/types.ts';
import type { Link } from '../../lib/netlink/link.ts';
import { Rtnl } from '../../lib/netlink/rtnl.ts';
import { Tc } from '../../lib/netlink/tc.ts';
import { openPodNetns } from '../../lib/pod/netns.ts';
import { parseBandwidthConfig, type BandwidthConfig } from './config.ts';
import { findHostVeth, requirePrevResult } from './host-veth.ts';
import { setupIfb, teardownIfb } from './ifb.ts';
import { ifbName } from './names.ts';
import { planShaping } from './plan.ts';
import { bucketParams, readTickInUsec } from './shaping.ts';
import { clearShaping, setupRedirect, setupShaping, teardownRedirect, teardownShaping } from './tc-steps.ts';

/** ADD: returns prevResult, with the ifb appended as a host interface when egress is shaped (as the reference does). */
export function cmdAdd(a: CmdArgs): Result {
  const cfg = parseBandwidthConfig(a);
  const prev = requirePrevResult(a.prevResult);
  if (cfg.ingress === null && cfg.egress === null) return prev;
  const pod = openPodNetns(a.netns);
  const host = Rtnl.open();
  try {
    const veth = findHostVeth(host, prev, pod, a.ifName);
    const tc = new Tc(host);
    const ifb = ifbName(cfg.name, a.containerId);
    clearShaping(tc, veth.index); // what an ADD of this attachment killed earlier left (setupIfb replaces a stale ifb)
    return new Rollback().runSync((rb) => {
      const made = applyShaping(host, tc, cfg, veth, ifb, rb);
      return made === null ? prev : { ...prev, interfaces: [...(prev.interfaces ?? []), { name: made.name, mac: made.mac }] };
    });
  } finally {
    host.close();
    pod.close();
  }
}

/**
 * The named steps of ADD; returns the ifb when egress is shaped. Each undo is recorded before its
 * step (the teardowns are idempotent), so a step that fails half-way is undone too.
 */
function applyShaping(host: Rtnl, tc: Tc, cfg: BandwidthConfig, veth: Link, ifb: string, rb: Rollback): Link | null {
  const tick = readTickInUsec();
  if (cfg.ingress !== null) {
    rb.push(`shaping on ${veth.name}`, () => teardownShaping(tc, veth.index));
    setupShaping(tc, veth.index, planShaping(bucketParams(cfg.ingress, tick), cfg.subnets, cfg.exclude, 'src'));
  }
  if (cfg.egress === null) return null;
  rb.push(`ifb ${ifb}`, () => teardownIfb(host, ifb)); // its qdiscs go with it
  const dev = setupIfb(host, ifb, cfg.name, veth);
  setupShaping(tc, dev.index, planShaping(bucketParams(cfg.egress, tick), cfg.subnets, cfg.exclude, 'dst'));
  // Last: the pod's traffic goes to the ifb only once the ifb shapes it.
  rb.push(`redirect on ${veth.name}`, () => teardownRedirect(tc, veth.index));
  setupRedirect(tc, veth.index, dev.index);
  return dev;
}

/** Removes this attachment's qdiscs on the host veth and its ifb (its own qdisc goes with it). Idempotent. */
export function removeShaping(host: Rtnl, tc: Tc, vethIndex: number | null, ifb: string): void {
  if (vethIndex !== null) {
    teardownRedirect(tc, vethIndex);
    teardownShaping(tc, vethIndex);
  }
  teardownIfb(host, ifb);
}

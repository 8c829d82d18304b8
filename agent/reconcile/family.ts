// One reconcile of one address family, in the node's netns (the Rtnl socket's): desired state from
// the leases, the plan against the kernel, and its application. weftd runs it for IPv4 and, with
// EnableIPv6, for IPv6 (flannel.<VNI> and flannel-v6.<VNI> are programmed independently).
import type { Rtnl } from '../../lib/netlink/index.ts';
import type { Lease } from '../lease/store.ts';
import { planAdditions } from './additions.ts';
import { applyPlan, applyPlanSlices, readActualSlices, type ApplyOutcome } from './apply.ts';
import { desiredState, type DesiredInput, type DesiredState } from './desired.ts';
import { familyDev, planReconcile, type DevIndexes, type Op, type Plan } from './diff.ts';
import { runToEnd } from './loop.ts';
import { TouchedPeers } from './touched.ts';

/** One family's side of this node: its cluster network, own subnet, public address and uplink prefix. */
export interface FamilyTarget {
  family: 4 | 6;
  network: string;
  ownSubnet: string;
  publicIp: string;
  uplinkCidr: string;
}

/** The families to reconcile (pure): IPv4 unless the Network is empty, IPv6 when every IPv6 piece is there. */
export function familyTargets(
  conf: { network: string; ipv6Network?: string },
  own: Lease,
  uplink: { publicIp: string; cidr: string },
  uplink6: { publicIp: string; cidr: string } | undefined,
): FamilyTarget[] {
  const out: FamilyTarget[] = [];
  if (conf.network !== '') out.push({ family: 4, network: conf.network, ownSubnet: own.subnet, publicIp: uplink.publicIp, uplinkCidr: uplink.cidr });
  if (uplink6 !== undefined && conf.ipv6Network !== undefined && own.ipv6Subnet !== undefined) {
    out.push({ family: 6, network: conf.ipv6Network, ownSubnet: own.ipv6Subnet, publicIp: uplink6.publicIp, uplinkCidr: uplink6.cidr });
  }
  return out;
}

/** What one family's pass wanted, planned and did. */
export interface FamilyOutcome {
  desired: DesiredState;
  plan: Plan;
  out: ApplyOutcome;
}

/** What `leases` should program for one family (pure). */
function familyDesired(t: FamilyTarget, base: Pick<DesiredInput, 'backend' | 'directRouting' | 'vni'>, leases: readonly Lease[]): ReturnType<typeof desiredState> {
  return desiredState({ ...base, family: t.family, ownSubnet: t.ownSubnet, publicIp: t.publicIp, uplinkCidr: t.uplinkCidr }, leases);
}

/** Reads, plans and applies one family against `dev` (both VTEPs; the family's is picked here). */
export function reconcileFamily(
  rtnl: Rtnl,
  t: FamilyTarget,
  base: Pick<DesiredInput, 'backend' | 'directRouting' | 'vni'>,
  leases: readonly Lease[],
  dev: DevIndexes,
): FamilyOutcome {
  return runToEnd(reconcileFamilySlices(rtnl, t, base, leases, dev, new TouchedPeers()));
}

/**
 * reconcileFamily in slices (a generator; the caller hands the event loop back at each yield): the
 * desired state, then each kernel dump, then the diff, then its application APPLY_SLICE_MS
 * at a time (`applied` told of each change as it is made). Peers in `touched` (filled by the caller while the pass is suspended) are
 * left out of the plan and of the operations still to run: their entries were read at other
 * moments than their leases (touched.ts).
 */
export function* reconcileFamilySlices(
  rtnl: Rtnl,
  t: FamilyTarget,
  base: Pick<DesiredInput, 'backend' | 'directRouting' | 'vni'>,
  leases: readonly Lease[],
  dev: DevIndexes,
  touched: TouchedPeers,
  applied?: (op: Op) => void,
): Generator<void, FamilyOutcome, undefined> {
  const fdev = familyDev(dev, t.family);
  const desired = familyDesired(t, base, leases);
  yield;
  const actual = yield* readActualSlices(rtnl, fdev, t.family);
  yield;
  const plan = touched.filter(planReconcile(desired, actual, fdev, t.network));
  // Thousands of changes (a cold start, a batch) are applied in slices too; peers touched meanwhile are skipped.
  const out = yield* applyPlanSlices(rtnl, plan, fdev, { skip: (op) => touched.concerns(op), ...(applied !== undefined ? { applied } : {}) });
  return { desired, plan, out };
}

/** Programs only `joined` (leases new to the table) for one family, without reading the kernel (see additions.ts). */
export function reconcileJoined(
  rtnl: Rtnl,
  t: FamilyTarget,
  base: Pick<DesiredInput, 'backend' | 'directRouting' | 'vni'>,
  joined: readonly Lease[],
  dev: DevIndexes,
  applied?: (op: Op) => void,
): FamilyOutcome {
  const fdev = familyDev(dev, t.family);
  const desired = familyDesired(t, base, joined);
  const plan = planAdditions(desired);
  return { desired, plan, out: applyPlan(rtnl, plan, fdev, applied !== undefined ? { applied } : {}) };
}

// Applying and removing shaping with rtnetlink tc messages, in the node netns: the root qdisc of a
// device (tbf, or htb + classes + filters), and the redirect of a host veth's incoming traffic
// (what the pod sends) to its ifb. No tc process.
import { NetlinkError, isNotFound } from '../../lib/netlink/errors.ts';
import { formatHtbClassOptions, formatHtbQdiscOptions } from '../../lib/netlink/tc-htb.ts';
import { TCA_EGRESS_REDIR, TC_ACT_STOLEN, formatU32Options } from '../../lib/netlink/tc-filter.ts';
import { ETH_P_ALL, TC_H_INGRESS, TC_H_INGRESS_QDISC, TC_H_ROOT, tcHandle } from '../../lib/netlink/tc-msg.ts';
import { formatTbfOptions } from '../../lib/netlink/tc-tbf.ts';
import type { Tc } from '../../lib/netlink/tc.ts';
import { HTB_R2Q, ROOT_HANDLE, SHAPED_MINOR, UNCAPPED_RATE, UNSHAPED_MINOR, type ShapingPlan } from './plan.ts';

/** Priority of the redirect filter (the reference's). */
export const REDIRECT_PRIO = 1;

/** Puts `plan` on the device as its root qdisc; the device must have no root qdisc of ours (see teardownShaping). */
export function setupShaping(tc: Tc, ifindex: number, plan: ShapingPlan): void {
  const b = plan.bucket;
  if (plan.kind === 'tbf') {
    tc.addQdisc({ ifindex, handle: ROOT_HANDLE, parent: TC_H_ROOT, kind: 'tbf', options: formatTbfOptions({ rate: b.rateBytes, limit: b.limit, buffer: b.buffer }) });
    return;
  }
  tc.addQdisc({ ifindex, handle: ROOT_HANDLE, parent: TC_H_ROOT, kind: 'htb', options: formatHtbQdiscOptions({ defcls: plan.defaultMinor, rate2quantum: HTB_R2Q }) });
  // The capped class's ceil is twice its rate, as the reference sets it; a class right under the
  // qdisc has no parent to borrow from, so it never goes past its rate.
  tc.addClass({ ifindex, handle: tcHandle(1, SHAPED_MINOR), parent: ROOT_HANDLE, kind: 'htb',
    options: formatHtbClassOptions({ rate: b.rateBytes, ceil: 2n * b.rateBytes, buffer: b.buffer, cbuffer: b.buffer }) });
  tc.addClass({ ifindex, handle: tcHandle(1, UNSHAPED_MINOR), parent: ROOT_HANDLE, kind: 'htb',
    options: formatHtbClassOptions({ rate: UNCAPPED_RATE, ceil: UNCAPPED_RATE, buffer: 0, cbuffer: 0 }) });
  for (const f of plan.filters) {
    tc.addFilter({ ifindex, parent: ROOT_HANDLE, prio: f.prio, protocol: f.protocol, kind: 'u32',
      options: formatU32Options({ classid: tcHandle(1, f.minor), keys: f.keys, actions: [] }) });
  }
}

/** Removes the device's root qdisc when it is ours (handle 1:; classes and filters go with it). Idempotent. */
export function teardownShaping(tc: Tc, ifindex: number): void {
  ignoreAbsent(() => tc.delQdisc({ ifindex, parent: TC_H_ROOT, handle: ROOT_HANDLE }));
}

/** Sends everything arriving on the host veth (what the pod sends) to the ifb's egress: ingress qdisc + match-all u32 + mirred redirect. */
export function setupRedirect(tc: Tc, vethIndex: number, ifbIndex: number): void {
  tc.addQdisc({ ifindex: vethIndex, handle: TC_H_INGRESS_QDISC, parent: TC_H_INGRESS, kind: 'ingress' });
  tc.addFilter({ ifindex: vethIndex, parent: TC_H_INGRESS_QDISC, prio: REDIRECT_PRIO, protocol: ETH_P_ALL, kind: 'u32',
    options: formatU32Options({ classid: tcHandle(1, 1), keys: [], actions: [{ eaction: TCA_EGRESS_REDIR, ifindex: ifbIndex, action: TC_ACT_STOLEN }] }) });
}

/** Removes the host veth's ingress qdisc and with it the redirect filter. Idempotent. */
export function teardownRedirect(tc: Tc, vethIndex: number): void {
  ignoreAbsent(() => tc.delQdisc({ ifindex: vethIndex, parent: TC_H_INGRESS, handle: TC_H_INGRESS_QDISC }));
}

/** Removes our root qdisc and the ingress qdisc when one dump shows them: no failed request on a clean device (ADD's fast path). */
export function clearShaping(tc: Tc, ifindex: number): void {
  for (const q of tc.listQdiscs(ifindex)) {
    if (q.parent === TC_H_ROOT && q.handle === ROOT_HANDLE) teardownShaping(tc, ifindex);
    else if (q.parent === TC_H_INGRESS && q.kind === 'ingress') teardownRedirect(tc, ifindex);
  }
}

// Deleting a qdisc that is not there: ENOENT (nothing attached, or only the default with handle 0)
// or EINVAL (another handle is attached: not ours, left alone); a link gone is ENODEV.
function ignoreAbsent(fn: () => void): void {
  try {
    fn();
  } catch (e) {
    if (isNotFound(e) || (e instanceof NetlinkError && e.code === 'EINVAL')) return;
    throw e;
  }
}

// CHECK, in the node netns: the live qdiscs, classes and filters match what ADD would have made for
// this config, the ifb exists and the host veth redirects to it. Code 131 naming each difference.
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { Rtnl } from '../../lib/netlink/rtnl.ts';
import { parseHtbClassOptions, parseHtbQdiscOptions } from '../../lib/netlink/tc-htb.ts';
import { TCA_EGRESS_REDIR, parseU32Options } from '../../lib/netlink/tc-filter.ts';
import { TC_H_INGRESS_QDISC, TC_H_ROOT, filterPrio, filterProtocol, tcHandle, type TcObject } from '../../lib/netlink/tc-msg.ts';
import { parseTbfOptions } from '../../lib/netlink/tc-tbf.ts';
import { Tc } from '../../lib/netlink/tc.ts';
import { parseBandwidthConfig } from './config.ts';
import { checkFailed } from './errors.ts';
import { openPodNetns } from '../../lib/pod/netns.ts';
import { findHostVeth, requirePrevResult } from './host-veth.ts';
import { ifbName } from './names.ts';
import { ROOT_HANDLE, SHAPED_MINOR, UNCAPPED_RATE, UNSHAPED_MINOR, planShaping, type ShapingPlan } from './plan.ts';
import { bucketParams, readTickInUsec, tbfDumpedBuffer } from './shaping.ts';

/** A device's live tc state as CHECK reads it. */
export interface DeviceTc {
  name: string;
  qdiscs: TcObject[];
  classes: TcObject[];
  /** Filters under the root qdisc. */
  filters: TcObject[];
}

/** Differences between a device's root shaping and `plan`; empty when it matches. Pure. */
export function shapingProblems(dev: DeviceTc, plan: ShapingPlan): string[] {
  const root = dev.qdiscs.find((q) => q.parent === TC_H_ROOT);
  const b = plan.bucket;
  if (root?.handle !== ROOT_HANDLE || root.kind !== plan.kind) return [`${dev.name}: no ${plan.kind} root qdisc 1: (found ${root ? `${root.kind} ${root.handle.toString(16)}` : 'none'})`];
  if (plan.kind === 'tbf') {
    const t = parseTbfOptions(root.options);
    const want = { rate: b.rateBytes, limit: b.limit, buffer: b.buffer };
    const bufferOk = t !== null && (t.buffer === b.buffer || t.buffer === tbfDumpedBuffer(b.buffer));
    if (t === null || t.rate !== want.rate || t.limit !== want.limit || !bufferOk) {
      return [`${dev.name}: tbf is ${t ? `rate ${t.rate} limit ${t.limit} buffer ${t.buffer}` : 'unreadable'}, expected rate ${want.rate} limit ${want.limit} buffer ${want.buffer}`];
    }
    return [];
  }
  const problems: string[] = [];
  const h = parseHtbQdiscOptions(root.options);
  if (h?.defcls !== plan.defaultMinor) problems.push(`${dev.name}: htb default class ${h?.defcls ?? '?'}, expected ${plan.defaultMinor}`);
  const cls = (minor: number) => dev.classes.find((c) => c.kind === 'htb' && c.handle === tcHandle(1, minor));
  const shaped = cls(SHAPED_MINOR);
  const s = shaped ? parseHtbClassOptions(shaped.options) : null;
  if (s?.rate !== b.rateBytes || s.buffer !== b.buffer) problems.push(`${dev.name}: class 1:30 is ${s ? `rate ${s.rate} buffer ${s.buffer}` : 'missing'}, expected rate ${b.rateBytes} buffer ${b.buffer}`);
  const u = cls(UNSHAPED_MINOR);
  if ((u ? parseHtbClassOptions(u.options)?.rate : undefined) !== UNCAPPED_RATE) problems.push(`${dev.name}: uncapped class 1:1 missing or limited`);
  for (const f of plan.filters) {
    const found = dev.filters.some((x) => {
      if (x.kind !== 'u32' || filterPrio(x) !== f.prio || filterProtocol(x) !== f.protocol) return false;
      const o = parseU32Options(x.options);
      return o.divisor === undefined && o.classid === tcHandle(1, f.minor) && JSON.stringify(o.keys) === JSON.stringify(f.keys);
    });
    if (!found) problems.push(`${dev.name}: u32 filter prio ${f.prio} to class 1:${f.minor.toString(16)} for ${JSON.stringify(f.keys)} missing`);
  }
  return problems;
}

/** Whether the host veth's ingress filters redirect to ifindex `ifb`. Pure. */
export function redirectsTo(ingressFilters: readonly TcObject[], ifb: number): boolean {
  return ingressFilters.some((f) => f.kind === 'u32' && parseU32Options(f.options).actions.some((a) => a.eaction === TCA_EGRESS_REDIR && a.ifindex === ifb));
}

function readDevice(tc: Tc, index: number, name: string): DeviceTc {
  return { name, qdiscs: tc.listQdiscs(index), classes: tc.listClasses(index), filters: tc.listFilters(index, ROOT_HANDLE) };
}

/** CHECK. */
export function cmdCheck(a: CmdArgs): void {
  const cfg = parseBandwidthConfig(a);
  const prev = requirePrevResult(a.prevResult);
  if (cfg.ingress === null && cfg.egress === null) return;
  const pod = openPodNetns(a.netns);
  const host = Rtnl.open();
  try {
    const veth = findHostVeth(host, prev, pod, a.ifName);
    const tc = new Tc(host);
    const tick = readTickInUsec();
    const problems: string[] = [];
    if (cfg.ingress !== null) {
      problems.push(...shapingProblems(readDevice(tc, veth.index, veth.name), planShaping(bucketParams(cfg.ingress, tick), cfg.subnets, cfg.exclude, 'src')));
    }
    if (cfg.egress !== null) {
      const name = ifbName(cfg.name, a.containerId);
      const ifb = host.getLink(name);
      if (ifb?.kind !== 'ifb') problems.push(`ifb ${name} is missing`);
      else {
        problems.push(...shapingProblems(readDevice(tc, ifb.index, name), planShaping(bucketParams(cfg.egress, tick), cfg.subnets, cfg.exclude, 'dst')));
        const hasIngress = tc.listQdiscs(veth.index).some((q) => q.handle === TC_H_INGRESS_QDISC && q.kind === 'ingress');
        if (!hasIngress || !redirectsTo(tc.listFilters(veth.index, TC_H_INGRESS_QDISC), ifb.index)) problems.push(`${veth.name}: no redirect of its incoming traffic to ${name}`);
      }
    }
    if (problems.length > 0) throw checkFailed('bandwidth: CHECK failed', problems.join('; '));
  } finally {
    host.close();
    pod.close();
  }
}

// Check "bridge": cni0's IPv4 address against the node's current subnet. After a subnet change the
// old gateway stays on cni0 and every ADD fails with "cni0 already has an IP address different
// from ...": name the old address, the pods still on it, and the command that repairs it. Pure.
import { containsIPv4, formatIPv4, maskIPv4, parseCidr4Loose, parseIPv4 } from '../../lib/ip/ipv4.ts';
import { gatewayForm } from '../../lib/flannel/subnet-env.ts';
import { isLive, type LiveAttachments } from '../../lib/attach/bridge-veth.ts';
import type { Allocation } from './allocations.ts';
import type { NodeState } from './node-state.ts';
import type { CheckResult, Problem } from './problem.ts';

/** Inputs of the bridge check. */
export interface BridgeInput {
  bridge: string;
  /** The node's current subnet in network form, from its lease (else subnet.env); null when unknown. */
  subnet: string | null;
  node: NodeState;
  allocs: readonly Allocation[];
  live: LiveAttachments;
}

/** Runs the check. */
export function checkBridge(i: BridgeInput): CheckResult {
  const check = 'bridge';
  const link = i.node.links.find((l) => l.name === i.bridge);
  if (link === undefined) return { check, problems: [], facts: {}, skipped: `${i.bridge} does not exist yet (created by the first pod ADD)` };
  if (i.subnet === null) return { check, problems: [], facts: {}, skipped: 'the node subnet is unknown (see the lease check)' };
  const want = gatewayForm(i.subnet);
  const have = i.node.addrs.filter((a) => a.index === link.index && a.family === 4);
  const facts: Record<string, unknown> = { bridge: i.bridge, want, have: have.map((a) => a.cidr).join(',') };
  const problems: Problem[] = [];
  const wrong = have.filter((a) => a.cidr !== want);
  for (const a of wrong) {
    const c = parseCidr4Loose(a.cidr);
    const oldNet = c === null ? null : { ip: maskIPv4(c.ip, c.prefix), prefix: c.prefix };
    const oldText = oldNet === null ? a.cidr : `${formatIPv4(oldNet.ip)}/${oldNet.prefix}`;
    const inOld = i.allocs.filter((x) => {
      const ip = parseIPv4(x.ip);
      return oldNet !== null && ip !== null && containsIPv4(oldNet, ip);
    });
    const onOld = inOld.filter((x) => isLive(i.live, x.containerId, x.ifName));
    const leaked = inOld.filter((x) => !onOld.includes(x));
    const list = (xs: readonly Allocation[]): string => xs.map((x) => `${x.containerId}/${x.ifName}=${x.ip}`).join(', ');
    const now = `ip addr del ${a.cidr} dev ${i.bridge}`;
    // weft's bridge moves the address itself on the next ADD once no address file is left in the old subnet.
    const then = `the next pod ADD then moves ${i.bridge} to ${want} by itself (weft's bridge), or now: ${now}`;
    problems.push({
      check,
      detail: `${i.bridge} has ${a.cidr}, but the node's subnet is ${i.subnet} (gateway ${want}): pod ADDs fail with "${i.bridge} already has an IP address different from ${want}"` +
        (onOld.length > 0 ? `; ${onOld.length} pod(s) still on ${oldText}: ${list(onOld)}` : '') +
        (leaked.length > 0 ? `; ${leaked.length} leaked address file(s) on ${oldText}: ${list(leaked)}` : ''),
      fix: onOld.length > 0 ? `delete or restart the pods still on ${oldText} (they cannot reach the cluster)${leaked.length > 0 ? ' and run CNI GC' : ''}; ${then}`
        : leaked.length > 0 ? `run CNI GC (see the ipam check) or remove those address files; ${then}`
          : `${i.bridge} moves to ${want} on the next pod ADD by itself (weft's bridge); with another bridge plugin, or now: ${now}`,
    });
  }
  return { check, problems, facts };
}

// Check "ipam": host-local allocations whose attachment has no host veth on the node (the pod's
// netns is gone and DEL never ran: a leaked address), with CNI GC as the repair; and two CNI networks
// allocating from one subnet of this node (host-local keeps its records per network name, so each
// hands out addresses the other holds: a renamed network after a migration). Pure.
import { isLive, type LiveAttachments } from '../../lib/attach/bridge-veth.ts';
import { containsIPv4, formatIPv4, maskIPv4, parseCidr4Loose, parseIPv4 } from '../../lib/ip/ipv4.ts';
import type { Allocation } from './allocations.ts';
import type { CheckResult, Problem } from './problem.ts';

/** The problems of networks sharing one of `subnets` (each a CIDR of this node's pods: its lease, the bridge's). */
export function sharedSubnetProblems(allocs: readonly Allocation[], subnets: readonly string[]): Problem[] {
  const problems: Problem[] = [];
  const nets = new Map<string, { ip: number; prefix: number }>();
  for (const s of subnets) {
    const c = parseCidr4Loose(s);
    if (c !== null) nets.set(`${formatIPv4(maskIPv4(c.ip, c.prefix))}/${c.prefix}`, { ip: maskIPv4(c.ip, c.prefix), prefix: c.prefix });
  }
  for (const [text, c] of nets) {
    const inside = allocs.filter((a) => {
      const ip = parseIPv4(a.ip);
      return ip !== null && containsIPv4(c, ip);
    });
    const byNet = new Map<string, Allocation[]>();
    for (const a of inside) byNet.set(a.network, [...(byNet.get(a.network) ?? []), a]);
    if (byNet.size < 2) continue;
    const names = [...byNet.keys()].sort();
    const counts = names.map((n) => `${n}: ${byNet.get(n)?.length ?? 0}`).join(', ');
    const ips = new Map<string, string[]>();
    for (const a of inside) ips.set(a.ip, [...(ips.get(a.ip) ?? []), `${a.network} (${a.containerId}/${a.ifName})`]);
    const dups = [...ips].filter(([, held]) => held.length > 1).map(([ip, held]) => `${ip} held under ${held.join(' and ')}`);
    problems.push({
      check: 'ipam',
      detail: `CNI networks ${names.map((n) => JSON.stringify(n)).join(' and ')} both allocate from ${text} on this node (addresses held: ${counts}): ` +
        `host-local keeps its records per network name, so each can hand out an address the other holds${dups.length > 0 ? `; already given twice: ${dups.join('; ')}` : ''}`,
      fix: `keep one network name for this subnet: name weft's network as the old one was named (kube-flannel's is "cbr0": weft install --network-name cbr0), ` +
        `or drain the node so that the other network's pods are gone and remove its directory (the one not in use) under the ipam data dir`,
    });
  }
  return problems;
}

/** Runs the check over the read allocations and live attachments; `subnets`: this node's pod subnets (lease, bridge). */
export function checkAllocations(dataDir: string, allocs: readonly Allocation[], live: LiveAttachments, subnets: readonly string[] = []): CheckResult {
  const check = 'ipam';
  const problems: Problem[] = [...sharedSubnetProblems(allocs, subnets)];
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

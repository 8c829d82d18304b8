// Check "policy": weftd --network-policy's view of this node (agent/policy/state.ts: its pods, the
// policies selecting them, their chains and sets) against the kernel's `inet weft-policy` table and
// host-local's allocations. Names each pod a policy selects that no rule covers: an address missing
// from its isolation or target set, a policy chain absent or not jumped to from the address's group
// chain (the verdict map's element), or a pod whose address
// per the API is allocated to no container here. Reads the node's netns and files; changes nothing.
import { readFileSync } from 'node:fs';
import { familyOfText, parseIp } from '../../lib/ip/addr.ts';
import { cidrContains, parseCidr } from '../../lib/ip/cidr.ts';
import { listTable } from '../../lib/netfilter/list.ts';
import { contentFromListing } from '../../lib/netfilter/table-diff.ts';
import type { NftTableState } from '../../lib/netfilter/types.ts';
import { MAP_EG, MAP_EG6, MAP_IN, MAP_IN6, POLICY_TABLE, SET_ISO_EG, SET_ISO_EG6, SET_ISO_IN, SET_ISO_IN6, parsePolicyView, policyViewPath, type PolicyView } from '../../agent/inspect.ts';
import type { Allocation } from './allocations.ts';
import { WEFTD_FIXES, type CheckResult, type Problem } from './problem.ts';

const CHECK = 'policy';
const TABLE = `${POLICY_TABLE.family} ${POLICY_TABLE.name}`;

/** What the check reads: weftd's view (null: no file), the kernel's table (null: absent), this node's allocations and lease subnets. */
export interface PolicyInputs {
  viewPath: string;
  view: PolicyView | null;
  table: NftTableState | null;
  allocs: readonly Allocation[];
  subnets: readonly string[];
}

/** Judges the inputs (pure). */
export function checkPolicy(i: PolicyInputs): CheckResult {
  const problems: Problem[] = [];
  if (i.view === null) {
    if (i.table === null) return { check: CHECK, problems, facts: {}, skipped: `no ${i.viewPath} and no table ${TABLE}: weftd runs without --network-policy` };
    problems.push({ check: CHECK, detail: `table ${TABLE} is in the kernel but weftd left no policy view at ${i.viewPath}: policy is enforced as last programmed, and pods or policies changed since are not`, fix: 'run weftd with --network-policy (systemctl status weftd), or remove the table: nft delete table inet weft-policy' });
    return { check: CHECK, problems, facts: {} };
  }
  const view = i.view;
  const selected = view.pods.filter((p) => p.ingress.length > 0 || p.egress.length > 0);
  const facts = { policies: view.policies.length, podsHere: view.pods.length, podsSelected: selected.length };
  if (i.table === null) {
    if (view.policies.length > 0) problems.push({ check: CHECK, detail: `weftd's view lists ${view.policies.length} policies selecting ${selected.length} pods here, but table ${TABLE} is missing: no pod is isolated`, fix: WEFTD_FIXES });
    return { check: CHECK, problems, facts };
  }
  const kernel = contentFromListing(i.table);
  const has = (set: string | undefined, ip: string): boolean => set !== undefined && kernel.sets.get(set)?.elements.has(ip) === true;
  const jumped = (from: string, chain: string): boolean => (i.table?.chains.get(from)?.rules ?? []).some((r) => JSON.stringify(r.expr).includes(`"target":"${chain}"`));
  // The group chain an address's verdict-map element jumps to.
  const groupOf = (map: string, ip: string): string | undefined => (i.table?.sets.get(map)?.elements ?? []).find((e) => e.key[0] === ip)?.data?.map(String).find((d) => d.startsWith('jump '))?.slice(5);
  const byPolicy = new Map(view.policies.map((p) => [p.policy, p]));
  const allocated = new Set(i.allocs.map((a) => a.ip));
  const subnets = i.subnets.map((s) => parseCidr(s)).filter((c) => c !== null);
  const inSubnets = (ip: string): boolean => { const a = parseIp(ip); return a !== null && subnets.some((c) => cidrContains(c, a)); };
  const checkAllocs = i.allocs.some((a) => inSubnets(a.ip));
  for (const p of selected) {
    const gaps: string[] = [];
    for (const dir of ['ingress', 'egress'] as const) {
      const policies = p[dir];
      if (policies.length === 0) continue;
      for (const ip of p.ips) {
        const v6 = familyOfText(ip) === 6;
        const iso = dir === 'ingress' ? (v6 ? SET_ISO_IN6 : SET_ISO_IN) : v6 ? SET_ISO_EG6 : SET_ISO_EG;
        if (!has(iso, ip)) gaps.push(`${ip} is not in ${iso} (${dir} not isolated)`);
        for (const key of policies) {
          const e = byPolicy.get(key);
          const target = e?.targetSets[v6 ? '6' : '4'];
          if (!has(target, ip)) gaps.push(`${ip} is not in ${key}'s target set ${target ?? '(none)'}`);
        }
      }
      for (const key of policies) {
        const chain = dir === 'ingress' ? byPolicy.get(key)?.ingressChain : byPolicy.get(key)?.egressChain;
        if (chain === undefined || !kernel.chains.has(chain)) gaps.push(`${key}'s ${dir} chain ${chain ?? '(none)'} is missing`);
        else {
          for (const ip of p.ips) {
            const v6 = familyOfText(ip) === 6;
            const group = groupOf(dir === 'ingress' ? (v6 ? MAP_IN6 : MAP_IN) : v6 ? MAP_EG6 : MAP_EG, ip);
            if (group === undefined || !jumped(group, chain)) gaps.push(`nothing jumps to ${key}'s ${dir} chain ${chain} for ${ip} (group ${group ?? 'none'})`);
          }
        }
      }
    }
    if (checkAllocs && !p.ips.some((ip) => allocated.has(ip))) gaps.push(`its address ${p.ips.join(', ')} (Pod status) is allocated to no container on this node, so its real address is in no set`);
    if (gaps.length === 0) continue;
    problems.push({
      check: CHECK,
      detail: `pod ${p.pod} is selected by ${[...new Set([...p.ingress, ...p.egress])].join(', ')} but no rule covers it: ${gaps.slice(0, 4).join('; ')}${gaps.length > 4 ? `; and ${gaps.length - 4} more` : ''}`,
      fix: gaps.some((g) => g.includes('allocated to no container')) ? 'the Pod\'s status.podIPs must be the address its CNI ADD gave it (kubectl get pod -o wide; crictl inspectp); a stale status clears when the kubelet updates it' : WEFTD_FIXES,
    });
  }
  if (view.policies.length > 0 && checkAllocs) {
    const known = new Set(view.pods.flatMap((p) => p.ips));
    for (const a of i.allocs) {
      if (!inSubnets(a.ip) || known.has(a.ip)) continue;
      problems.push({
        check: CHECK,
        detail: `address ${a.ip} (container ${a.containerId.slice(0, 12)}${a.ifName !== '' ? `/${a.ifName}` : ''}) is allocated on this node but no Pod weftd knows has it: whatever policy selects that pod, no rule covers it`,
        fix: 'if it persists, the pod\'s status.podIPs is missing or wrong (kubectl get pods -A -o wide), or the allocation is a leak (see the allocations check)',
      });
    }
  }
  return { check: CHECK, problems, facts };
}

/** The check on this node: the view beside `subnetFile`, the kernel's table, and the allocations doctor read. */
export function checkPolicyOnNode(subnetFile: string, allocs: readonly Allocation[], subnets: readonly (string | null | undefined)[]): CheckResult {
  const viewPath = policyViewPath(subnetFile);
  let text: string | null;
  try {
    text = readFileSync(viewPath, 'utf8');
  } catch {
    text = null;
  }
  let table: NftTableState | null;
  try {
    table = listTable(POLICY_TABLE);
  } catch (e) {
    return { check: CHECK, problems: [], facts: {}, skipped: `cannot list ${TABLE}: ${(e as Error).message.split('\n')[0] ?? ''}` };
  }
  const view = text === null ? null : parsePolicyView(text);
  if (text !== null && view === null) return { check: CHECK, problems: [{ check: CHECK, detail: `${viewPath} is not a policy view weft doctor reads`, fix: 'weftd rewrites it on its next policy pass; run the same weft version as weftd' }], facts: {} };
  return checkPolicy({ viewPath, view, table, allocs, subnets: subnets.filter((s): s is string => typeof s === 'string' && s !== '') });
}

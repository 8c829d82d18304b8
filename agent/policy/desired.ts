// NetworkPolicies + Pods + Namespaces -> the whole content of weft's `inet weft-policy` table (pure).
// Packet path O(1) in pods: pods are elements of sets (one set per distinct selector, one per named
// port), a policy is one chain of rules per peer x port clause (compile.ts), isolation is set
// membership, and a base chain reaches the policies of an address through one verdict-map lookup
// (groups.ts). Two forward-hook base chains (ingress, egress) so that an accept by one never skips the other.
import { nftExpr } from '../../lib/netfilter/expr.ts';
import { elementKey, taggedRule, type TableChain, type TableContent, type TableRule, type TableSet } from '../../lib/netfilter/table-diff.ts';
import type { NftTableRef } from '../../lib/netfilter/types.ts';
import { familyOfText } from '../../lib/ip/addr.ts';
import { compilePolicy, parseBlockCidr, scopeKey, type CompiledPolicy, type Families, type Scope, type SetRequest } from './compile.ts';
import { groupTable, noteSelecting, type AddrPolicies } from './groups.ts';
import { requestSet } from './request-set.ts';
import { matchesSelector } from './selector.ts';
import type { NamespaceLabels, PodInfo, Policy } from './types.ts';

export { peerSetName } from './compile.ts';
export { requestSet } from './request-set.ts';

/** weft's policy table (runs in the node's netns). */
export const POLICY_TABLE: NftTableRef = { family: 'inet', name: 'weft-policy' };
/** Base chains and fixed sets. */
export const CHAIN_IN = 'pol-ingress';
export const CHAIN_EG = 'pol-egress';
export const CHAIN_DROP_IN = 'pol-drop-in';
export const CHAIN_DROP_EG = 'pol-drop-eg';
export const SET_ISO_IN = 'iso-ingress';
export const SET_ISO_EG = 'iso-egress';
export const SET_NODE = 'node-addrs';
/** The IPv6 twins of the fixed sets. */
export const SET_ISO_IN6 = 'iso-ingress6';
export const SET_ISO_EG6 = 'iso-egress6';
export const SET_NODE6 = 'node-addrs6';
/** Named counters of every drop, by direction. */
export const COUNTER_DROP_IN = 'drops-in';
export const COUNTER_DROP_EG = 'drops-eg';

/** What the node knows: the cluster's policies, pods and namespaces, and which pods are its own. */
export interface PolicyWorld {
  policies: readonly Policy[];
  pods: readonly PodInfo[];
  namespaces: NamespaceLabels;
  isLocal(pod: PodInfo): boolean;
  /** Sources always accepted (the node's own addresses, cni0's gateway): kubelet probes. */
  nodeAddrs: readonly string[];
}

/** Per policy: its chains (absent when the type is off) and how many local pods it selects. */
export interface PolicyPlan {
  key: string;
  ingressChain?: string;
  egressChain?: string;
  /** Named counters of its drops (counted in the group chains of the addresses it selects), by direction. */
  ingressCounter?: string;
  egressCounter?: string;
  /** The set of the policy's own pods, per family ("4", "6"). */
  targetSets: Partial<Record<'4' | '6', string>>;
  localSelected: number;
}

/** A pod of this node as the table sees it: its addresses and the policies selecting it, by direction. */
export interface LocalPod {
  pod: string;
  ips: string[];
  ingress: string[];
  egress: string[];
}

/** The desired table plus figures for metrics. */
export interface DesiredPolicy {
  content: TableContent;
  plans: PolicyPlan[];
  isolated: { ingress: number; egress: number };
  rules: number;
  /** Every pod of this node (selected or not), sorted: what `weft doctor` compares the kernel with. */
  local: LocalPod[];
}

/** Compiled policies by their content, kept by the caller across passes (only the current ones stay). */
export type PolicyCompileCache = Map<string, CompiledPolicy>;

/**
 * Where an incremental caller keeps what a pass would otherwise recompute (incremental.ts): the pods
 * of each scope from its membership index, and the sets of scopes that did not change since the last pass.
 */
export interface MembershipSource {
  podsOf(s: Scope): readonly PodInfo[];
  /** The cached set `name`, or undefined when it must be filled again. */
  cachedSet(name: string): TableSet | undefined;
  /** Keeps a set just filled, for later passes. */
  keepSet(name: string, r: SetRequest, set: TableSet): void;
}

/** Builds the desired table; deterministic (policies sorted, sets named by content). Without `src`, every scope is matched against every pod (the cold path). */
export function desiredPolicy(w: PolicyWorld, cache: PolicyCompileCache = new Map(), src?: MembershipSource): DesiredPolicy {
  const families = tableFamilies(w);
  const v6 = families.includes(6);
  const byNs = new Map<string, PodInfo[]>();
  if (src === undefined) {
    for (const p of w.pods) {
      const list = byNs.get(p.namespace);
      if (list === undefined) byNs.set(p.namespace, [p]);
      else list.push(p);
    }
  }
  const sets = new Map<string, TableSet>();
  const podMemo = new Map<string, readonly PodInfo[]>();
  const podsOf = (s: Scope): readonly PodInfo[] => {
    if (src !== undefined) return src.podsOf(s);
    const k = scopeKey(s);
    const got = podMemo.get(k);
    if (got !== undefined) return got;
    const nss = s.ns !== undefined ? [s.ns] : [...byNs.keys()].filter((ns) => matchesSelector(s.nsSel ?? {}, w.namespaces.get(ns) ?? { 'kubernetes.io/metadata.name': ns }));
    const out: PodInfo[] = [];
    for (const ns of nss) for (const p of byNs.get(ns) ?? []) if (s.podSel === undefined || matchesSelector(s.podSel, p.labels)) out.push(p);
    podMemo.set(k, out);
    return out;
  };
  const fill = (name: string, r: SetRequest): void => {
    if (sets.has(name)) return;
    const kept = src?.cachedSet(name);
    if (kept !== undefined) {
      sets.set(name, kept);
      return;
    }
    fillNew(name, r);
    const made = sets.get(name);
    if (src !== undefined && made !== undefined) src.keepSet(name, r, made);
  };
  const fillNew = (name: string, r: SetRequest): void => {
    sets.set(name, requestSet(r, r.kind === 'block' ? [] : podsOf(r.scope)));
  };

  const chains = new Map<string, TableChain>();
  const counters = new Set<string>();
  const plans: PolicyPlan[] = [];
  // One accumulator per direction: local pods isolated that way, the policies selecting each address.
  const dirs = { ingress: newDirection(), egress: newDirection() };
  const { iso: isoIn, iso6: isoIn6 } = dirs.ingress;
  const { iso: isoEg, iso6: isoEg6 } = dirs.egress;
  const policies = [...w.policies].sort((a, b) => (`${a.namespace}/${a.name}` < `${b.namespace}/${b.name}` ? -1 : 1));
  const used = new Set<string>();
  const localPods = new Map<string, LocalPod>();
  const localView = (p: PodInfo): LocalPod => {
    const k = `${p.namespace}/${p.name}`;
    let v = localPods.get(k);
    if (v === undefined) {
      v = { pod: k, ips: [...p.ips], ingress: [], egress: [] };
      localPods.set(k, v);
    }
    return v;
  };
  for (const p of w.pods) if (w.isLocal(p)) localView(p);
  for (const pol of policies) {
    const key = `${pol.namespace}/${pol.name}`;
    const id = `${families.join(',')} ${policyText(pol)}`;
    used.add(id);
    let cp = cache.get(id);
    if (cp === undefined) {
      cp = compilePolicy(pol, families);
      cache.set(id, cp);
    }
    for (const [name, r] of cp.requests) fill(name, r);
    const local = podsOf(cp.target).filter((p) => w.isLocal(p));
    const plan: PolicyPlan = { key, targetSets: { ...(cp.targetSets[4] !== undefined ? { 4: cp.targetSets[4] } : {}), ...(cp.targetSets[6] !== undefined ? { 6: cp.targetSets[6] } : {}) }, localSelected: local.length };
    for (const d of ['ingress', 'egress'] as const) {
      const c = cp[d];
      if (c === undefined) continue;
      const acc = dirs[d];
      for (const p of local) {
        acc.pods.add(`${p.namespace}/${p.name}`);
        localView(p)[d].push(key);
        for (const ip of p.ips) {
          (familyOfText(ip) === 4 ? acc.iso : acc.iso6).add(ip);
          noteSelecting(acc.byIp, ip, key, c.jump, c.counter);
        }
      }
      plan[d === 'ingress' ? 'ingressChain' : 'egressChain'] = c.chain;
      plan[d === 'ingress' ? 'ingressCounter' : 'egressCounter'] = c.counter;
      counters.add(c.counter);
      chains.set(c.chain, { rules: c.rules });
    }
    plans.push(plan);
  }
  for (const id of cache.keys()) if (!used.has(id)) cache.delete(id);
  sets.set(SET_ISO_IN, { spec: { type: 'ipv4_addr', comment: 'local pods selected by an ingress policy' }, elements: isoIn });
  sets.set(SET_ISO_EG, { spec: { type: 'ipv4_addr', comment: 'local pods selected by an egress policy' }, elements: isoEg });
  sets.set(SET_NODE, { spec: { type: 'ipv4_addr', comment: 'this node: kubelet probes pass' }, elements: new Set(w.nodeAddrs.filter((ip) => familyOfText(ip) === 4).map((ip) => elementKey(ip))) });
  if (v6) {
    sets.set(SET_ISO_IN6, { spec: { type: 'ipv6_addr', comment: 'local pods selected by an ingress policy ipv6' }, elements: isoIn6 });
    sets.set(SET_ISO_EG6, { spec: { type: 'ipv6_addr', comment: 'local pods selected by an egress policy ipv6' }, elements: isoEg6 });
    sets.set(SET_NODE6, { spec: { type: 'ipv6_addr', comment: 'this node ipv6: kubelet probes pass' }, elements: new Set(w.nodeAddrs.filter((ip) => familyOfText(ip) === 6).map((ip) => elementKey(ip))) });
  }

  const head = (dir: 'daddr' | 'saddr'): TableRule[] => [
    // A cluster with no IPv6 address has no IPv6 set or rule: its IPv6 traffic (link-local) passes.
    ...(v6 ? [] : [taggedRule(nftExpr`meta nfproto != ipv4 accept`, 'not ipv4')]),
    taggedRule(nftExpr`ct state established,related accept`, 'replies'),
    taggedRule(dir === 'daddr' ? nftExpr`ip daddr != @${SET_ISO_IN} accept` : nftExpr`ip saddr != @${SET_ISO_EG} accept`, 'not isolated'),
    ...(v6 ? [taggedRule(dir === 'daddr' ? nftExpr`ip6 daddr != @${SET_ISO_IN6} accept` : nftExpr`ip6 saddr != @${SET_ISO_EG6} accept`, 'not isolated ipv6')] : []),
  ];
  const nodeRules = [taggedRule(nftExpr`ip saddr @${SET_NODE} accept`, 'node'), ...(v6 ? [taggedRule(nftExpr`ip6 saddr @${SET_NODE6} accept`, 'node ipv6')] : [])];
  // Named counters keep their values when a chain counting into them is rewritten (a policy added or
  // removed). Each policy's drops are counted in the group chains (groups.ts); these count every drop.
  counters.add(COUNTER_DROP_IN);
  counters.add(COUNTER_DROP_EG);
  chains.set(CHAIN_DROP_IN, { rules: [taggedRule(nftExpr`counter name ${COUNTER_DROP_IN} drop`, 'drop')] });
  chains.set(CHAIN_DROP_EG, { rules: [taggedRule(nftExpr`counter name ${COUNTER_DROP_EG} drop`, 'drop')] });
  // The lookup jumps to the group chain of the policies selecting the address; when it returns (no
  // policy accepted), the drop chain follows.
  const gIn = groupTable('ingress', dirs.ingress.byIp, v6);
  const gEg = groupTable('egress', dirs.egress.byIp, v6);
  for (const g of [gIn, gEg]) {
    for (const [name, c] of g.chains) chains.set(name, c);
    for (const [name, m] of g.maps) sets.set(name, m);
  }
  chains.set(CHAIN_IN, {
    base: { type: 'filter', hook: 'forward', priority: 0, policy: 'accept' },
    rules: [...head('daddr'), ...nodeRules, ...gIn.lookups, taggedRule(nftExpr`jump ${CHAIN_DROP_IN}`, 'deny')],
  });
  chains.set(CHAIN_EG, {
    base: { type: 'filter', hook: 'forward', priority: -1, policy: 'accept' },
    rules: [...head('saddr'), ...gEg.lookups, taggedRule(nftExpr`jump ${CHAIN_DROP_EG}`, 'deny')],
  });
  const rules = [...chains.values()].reduce((n, c) => n + c.rules.length, 0);
  return { content: { sets, chains, counters }, plans, isolated: { ingress: dirs.ingress.pods.size, egress: dirs.egress.pods.size }, rules,
    local: [...localPods.values()].sort((a, b) => (a.pod < b.pod ? -1 : 1)) };
}

/** A direction's accumulator for desiredPolicy. */
function newDirection(): { pods: Set<string>; iso: Set<string>; iso6: Set<string>; byIp: Map<string, AddrPolicies> } {
  return { pods: new Set<string>(), iso: new Set<string>(), iso6: new Set<string>(), byIp: new Map() };
}

const policyTexts = new WeakMap<Policy, string>();

/** A policy's content as text, once per policy object (objects are replaced, never changed, on a watch event). */
function policyText(pol: Policy): string {
  let t = policyTexts.get(pol);
  if (t === undefined) policyTexts.set(pol, (t = JSON.stringify(pol)));
  return t;
}

/** IPv4, and IPv6 when any pod, node address or ipBlock of the cluster is IPv6. */
export function tableFamilies(w: PolicyWorld): Families {
  const v6 = w.pods.some((p) => p.ips.some((ip) => familyOfText(ip) === 6)) || w.nodeAddrs.some((ip) => familyOfText(ip) === 6)
    || w.policies.some((p) => [...p.ingress, ...p.egress].some((r) => (r.peers ?? []).some((x) => x.ipBlock !== undefined && parseBlockCidr(x.ipBlock.cidr)?.addr.family === 6)));
  return v6 ? [4, 6] : [4];
}

// NetworkPolicies + Pods + Namespaces -> the whole content of weft's `inet weft-policy` table (pure).
// Packet path O(1) in pods: pods are elements of sets (one set per distinct selector, one per named
// port), a policy is one chain of rules per peer x port clause, isolation is set membership. Two
// forward-hook base chains (ingress, egress) so that an accept by one never skips the other.
import { createHash } from 'node:crypto';
import { nftExpr, type NftExpr } from '../../lib/netfilter/expr.ts';
import { elementKey, taggedRule, type TableChain, type TableContent, type TableRule, type TableSet } from '../../lib/netfilter/table-diff.ts';
import type { NftTableRef } from '../../lib/netfilter/types.ts';
import { formatIPv4, maskIPv4, parseCidr4Loose, lastIPv4, type Cidr4 } from '../../lib/ip/ipv4.ts';
import { matchesSelector, selectorKey } from './selector.ts';
import type { LabelSelector, NamespaceLabels, PodInfo, Policy, PolicyPeer, PolicyPort, PolicyRule } from './types.ts';

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
  localSelected: number;
}

/** The desired table plus figures for metrics. */
export interface DesiredPolicy {
  content: TableContent;
  plans: PolicyPlan[];
  isolated: { ingress: number; egress: number };
  rules: number;
}

/** Where pods come from: one namespace, or namespaces matching a selector; then an optional pod selector. */
interface Scope {
  ns?: string;
  nsSel?: LabelSelector;
  podSel?: LabelSelector;
}

const PROTOCOLS: Record<string, 'tcp' | 'udp' | 'sctp'> = { TCP: 'tcp', UDP: 'udp', SCTP: 'sctp' };

/** A set a compiled policy refers to; its elements are filled from the pods on every pass. */
type SetRequest = { kind: 'pods'; scope: Scope } | { kind: 'named'; scope: Scope; port: string; proto: 'tcp' | 'udp' | 'sctp' } | { kind: 'block'; cidrs: readonly Cidr4[] };

/** A policy's rules, which depend on the policy alone (set names name content, not members). */
interface CompiledPolicy {
  target: Scope;
  targetSet: string;
  ingress?: { chain: string; rules: TableRule[]; jump: TableRule; drop: TableRule };
  egress?: { chain: string; rules: TableRule[]; jump: TableRule; drop: TableRule };
  requests: Map<string, SetRequest>;
}

/** Compiled policies by their content, kept by the caller across passes (only the current ones stay). */
export type PolicyCompileCache = Map<string, CompiledPolicy>;

function podSetName(s: Scope): string {
  return `s-${hash(`pods ${scopeKey(s)}`)}`;
}

function namedSetName(s: Scope, port: string, proto: string): string {
  return `n-${hash(`named ${scopeKey(s)} port=${port}/${proto}`)}`;
}

function blockElements(cidrs: readonly Cidr4[]): string[] {
  return dropCovered(cidrs).map((c) => (c.prefix === 32 ? formatIPv4(c.ip) : `${formatIPv4(c.ip)}/${c.prefix}`)).sort();
}

function blockSetName(cidrs: readonly Cidr4[]): string {
  return `b-${hash(`block ${blockElements(cidrs).join(',')}`)}`;
}

/** A policy -> its chains' rules and the sets they use (pure; cached by content). */
function compilePolicy(pol: Policy): CompiledPolicy {
  const key = `${pol.namespace}/${pol.name}`;
  const target: Scope = { ns: pol.namespace, podSel: pol.podSelector };
  const requests = new Map<string, SetRequest>();
  const note = (name: string, r: SetRequest): string => {
    requests.set(name, r);
    return name;
  };
  const targetSet = note(podSetName(target), { kind: 'pods', scope: target });
  const ctx: ClauseCtx = {
    pol, target,
    podSet: (scope) => note(podSetName(scope), { kind: 'pods', scope }),
    namedPortSet: (scope, port, proto) => note(namedSetName(scope, port, proto), { kind: 'named', scope, port, proto }),
    cidrSet: (cidrs) => note(blockSetName(cidrs), { kind: 'block', cidrs }),
  };
  const out: CompiledPolicy = { target, targetSet, requests };
  if (pol.types.ingress) {
    const chain = `pi-${hash(key)}`;
    out.ingress = {
      chain, jump: taggedRule(nftExpr`jump ${chain}`, key), drop: taggedRule(nftExpr`ip daddr @${targetSet} counter`, `drop ${key}`),
      rules: [taggedRule(nftExpr`ip daddr != @${targetSet} return`, key), ...pol.ingress.flatMap((r) => clauses(ctx, r, 'in').map((e) => taggedRule(e, key)))],
    };
  }
  if (pol.types.egress) {
    const chain = `pe-${hash(key)}`;
    out.egress = {
      chain, jump: taggedRule(nftExpr`jump ${chain}`, key), drop: taggedRule(nftExpr`ip saddr @${targetSet} counter`, `drop ${key}`),
      rules: [taggedRule(nftExpr`ip saddr != @${targetSet} return`, key), ...pol.egress.flatMap((r) => clauses(ctx, r, 'eg').map((e) => taggedRule(e, key)))],
    };
  }
  return out;
}

const hashMemo = new Map<string, string>();

function hash(s: string, n = 12): string {
  const k = `${n}:${s}`;
  let h = hashMemo.get(k);
  if (h === undefined) {
    // Bounded: names of selectors and policies long gone are not kept for ever.
    if (hashMemo.size > 20_000) hashMemo.clear();
    h = createHash('sha256').update(s).digest('hex').slice(0, n);
    hashMemo.set(k, h);
  }
  return h;
}

function scopeKey(s: Scope): string {
  return `${s.ns !== undefined ? `ns=${s.ns}` : `nsSel=${selectorKey(s.nsSel ?? {})}`} pods=${s.podSel === undefined ? '*' : selectorKey(s.podSel)}`;
}

/** The set of a peer `podSelector` in `namespace` (benchmarks and tests look elements up in it). */
export function peerSetName(namespace: string, podSelector: LabelSelector): string {
  return podSetName({ ns: namespace, podSel: podSelector });
}

/** Builds the desired table; deterministic (policies sorted, sets named by content). */
export function desiredPolicy(w: PolicyWorld, cache: PolicyCompileCache = new Map()): DesiredPolicy {
  const byNs = new Map<string, PodInfo[]>();
  for (const p of w.pods) {
    const list = byNs.get(p.namespace);
    if (list === undefined) byNs.set(p.namespace, [p]);
    else list.push(p);
  }
  const sets = new Map<string, TableSet>();
  const podMemo = new Map<string, PodInfo[]>();
  const podsOf = (s: Scope): PodInfo[] => {
    const k = scopeKey(s);
    let got = podMemo.get(k);
    if (got !== undefined) return got;
    got = [];
    const nss = s.ns !== undefined ? [s.ns] : [...byNs.keys()].filter((ns) => matchesSelector(s.nsSel ?? {}, w.namespaces.get(ns) ?? { 'kubernetes.io/metadata.name': ns }));
    for (const ns of nss) for (const p of byNs.get(ns) ?? []) if (s.podSel === undefined || matchesSelector(s.podSel, p.labels)) got.push(p);
    podMemo.set(k, got);
    return got;
  };
  const fill = (name: string, r: SetRequest): void => {
    if (sets.has(name)) return;
    if (r.kind === 'pods') {
      // Pod addresses are dotted quads checked by trimPod: they are their own element keys.
      sets.set(name, { spec: { type: 'ipv4_addr', comment: commentOf(scopeKey(r.scope)) }, elements: new Set(podsOf(r.scope).flatMap((p) => p.ips)) });
    } else if (r.kind === 'named') {
      const els = new Set<string>();
      // Resolved per pod: the same name may mean a different number on each pod.
      for (const p of podsOf(r.scope)) for (const np of p.ports) if (np.name === r.port && PROTOCOLS[np.protocol] === r.proto) for (const ip of p.ips) els.add(`${ip} . ${r.proto} . ${np.port}`);
      sets.set(name, { spec: { type: ['ipv4_addr', 'inet_proto', 'inet_service'], comment: commentOf(`${scopeKey(r.scope)} port=${r.port}/${r.proto}`) }, elements: els });
    } else {
      const norm = blockElements(r.cidrs);
      sets.set(name, { spec: { type: 'ipv4_addr', flags: ['interval'], comment: commentOf(`ipBlock ${norm.join(',')}`) }, elements: new Set(norm.map((c) => elementKey(c))) });
    }
  };

  const chains = new Map<string, TableChain>();
  const plans: PolicyPlan[] = [];
  const isoIn = new Set<string>();
  const isoEg = new Set<string>();
  const jumpsIn: TableRule[] = [];
  const jumpsEg: TableRule[] = [];
  const dropIn: TableRule[] = [];
  const dropEg: TableRule[] = [];
  const policies = [...w.policies].sort((a, b) => (`${a.namespace}/${a.name}` < `${b.namespace}/${b.name}` ? -1 : 1));
  const used = new Set<string>();
  for (const pol of policies) {
    const key = `${pol.namespace}/${pol.name}`;
    const id = JSON.stringify(pol);
    used.add(id);
    let cp = cache.get(id);
    if (cp === undefined) {
      cp = compilePolicy(pol);
      cache.set(id, cp);
    }
    for (const [name, r] of cp.requests) fill(name, r);
    const local = podsOf(cp.target).filter((p) => w.isLocal(p));
    const plan: PolicyPlan = { key, localSelected: local.length };
    if (cp.ingress !== undefined) {
      for (const p of local) for (const ip of p.ips) isoIn.add(ip);
      plan.ingressChain = cp.ingress.chain;
      chains.set(cp.ingress.chain, { rules: cp.ingress.rules });
      jumpsIn.push(cp.ingress.jump);
      dropIn.push(cp.ingress.drop);
    }
    if (cp.egress !== undefined) {
      for (const p of local) for (const ip of p.ips) isoEg.add(ip);
      plan.egressChain = cp.egress.chain;
      chains.set(cp.egress.chain, { rules: cp.egress.rules });
      jumpsEg.push(cp.egress.jump);
      dropEg.push(cp.egress.drop);
    }
    plans.push(plan);
  }
  for (const id of cache.keys()) if (!used.has(id)) cache.delete(id);
  sets.set(SET_ISO_IN, { spec: { type: 'ipv4_addr', comment: 'local pods selected by an ingress policy' }, elements: isoIn });
  sets.set(SET_ISO_EG, { spec: { type: 'ipv4_addr', comment: 'local pods selected by an egress policy' }, elements: isoEg });
  sets.set(SET_NODE, { spec: { type: 'ipv4_addr', comment: 'this node: kubelet probes pass' }, elements: new Set(w.nodeAddrs.map((ip) => elementKey(ip))) });

  const head = (iso: string, dir: 'daddr' | 'saddr'): TableRule[] => [
    // IPv6 is not enforced yet (docs/network-policy.md).
    taggedRule(nftExpr`meta nfproto != ipv4 accept`, 'not ipv4'),
    taggedRule(nftExpr`ct state established,related accept`, 'replies'),
    taggedRule(dir === 'daddr' ? nftExpr`ip daddr != @${iso} accept` : nftExpr`ip saddr != @${iso} accept`, 'not isolated'),
  ];
  chains.set(CHAIN_DROP_IN, { rules: [...dropIn, taggedRule(nftExpr`counter drop`, 'drop')] });
  chains.set(CHAIN_DROP_EG, { rules: [...dropEg, taggedRule(nftExpr`counter drop`, 'drop')] });
  chains.set(CHAIN_IN, {
    base: { type: 'filter', hook: 'forward', priority: 0, policy: 'accept' },
    rules: [...head(SET_ISO_IN, 'daddr'), taggedRule(nftExpr`ip saddr @${SET_NODE} accept`, 'node'), ...jumpsIn, taggedRule(nftExpr`jump ${CHAIN_DROP_IN}`, 'deny')],
  });
  chains.set(CHAIN_EG, {
    base: { type: 'filter', hook: 'forward', priority: -1, policy: 'accept' },
    rules: [...head(SET_ISO_EG, 'saddr'), ...jumpsEg, taggedRule(nftExpr`jump ${CHAIN_DROP_EG}`, 'deny')],
  });
  const rules = [...chains.values()].reduce((n, c) => n + c.rules.length, 0);
  return { content: { sets, chains }, plans, isolated: { ingress: isoIn.size, egress: isoEg.size }, rules };
}

interface ClauseCtx {
  pol: Policy;
  target: Scope;
  podSet(s: Scope): string;
  namedPortSet(s: Scope, port: string, proto: 'tcp' | 'udp' | 'sctp'): string;
  cidrSet(c: readonly Cidr4[]): string;
}

type PeerMatch = { kind: 'any' } | { kind: 'pods'; scope: Scope } | { kind: 'block'; cidrs: Cidr4[]; except: Cidr4[] };
type PortMatch = { kind: 'any' } | { kind: 'proto'; proto: 'tcp' | 'udp' | 'sctp' } | { kind: 'range'; proto: 'tcp' | 'udp' | 'sctp'; from: number; to: number } | { kind: 'named'; proto: 'tcp' | 'udp' | 'sctp'; name: string };

function peerMatch(pol: Policy, p: PolicyPeer): PeerMatch | undefined {
  if (p.ipBlock !== undefined) {
    const c = parseCidr4Loose(p.ipBlock.cidr);
    if (c === null) return undefined; // IPv6 blocks: IPv6 is not enforced (accepted above)
    const except = (p.ipBlock.except ?? []).map(parseCidr4Loose).filter((x): x is Cidr4 => x !== null);
    return { kind: 'block', cidrs: [network(c)], except: except.map(network) };
  }
  if (p.namespaceSelector !== undefined) return { kind: 'pods', scope: { nsSel: p.namespaceSelector, ...(p.podSelector !== undefined ? { podSel: p.podSelector } : {}) } };
  if (p.podSelector !== undefined) return { kind: 'pods', scope: { ns: pol.namespace, podSel: p.podSelector } };
  return undefined;
}

function portMatch(p: PolicyPort): PortMatch | undefined {
  const proto = PROTOCOLS[(p.protocol ?? 'TCP').toUpperCase()];
  if (proto === undefined) return undefined;
  if (p.port === undefined) return { kind: 'proto', proto };
  if (typeof p.port === 'string') return /^\d+$/.test(p.port) ? { kind: 'range', proto, from: Number(p.port), to: Number(p.port) } : { kind: 'named', proto, name: p.port };
  return { kind: 'range', proto, from: p.port, to: p.endPort !== undefined && p.endPort > p.port ? p.endPort : p.port };
}

/** The accept rules of one ingress/egress rule: every peer x every port (an empty list means all). */
function clauses(c: ClauseCtx, r: PolicyRule, dir: 'in' | 'eg'): NftExpr[] {
  const peers: PeerMatch[] = r.peers === undefined || r.peers.length === 0 ? [{ kind: 'any' }] : r.peers.map((p) => peerMatch(c.pol, p)).filter((x): x is PeerMatch => x !== undefined);
  const ports: PortMatch[] = r.ports === undefined || r.ports.length === 0 ? [{ kind: 'any' }] : r.ports.map(portMatch).filter((x): x is PortMatch => x !== undefined);
  const peerAddr = dir === 'in' ? nftExpr`ip saddr` : nftExpr`ip daddr`;
  const out: NftExpr[] = [];
  for (const peer of peers) {
    for (const port of ports) {
      const parts: NftExpr[] = [];
      if (peer.kind === 'pods' && !(dir === 'eg' && port.kind === 'named')) parts.push(nftExpr`${peerAddr} @${c.podSet(peer.scope)}`);
      if (peer.kind === 'block') {
        parts.push(nftExpr`${peerAddr} @${c.cidrSet(peer.cidrs)}`);
        if (peer.except.length > 0) parts.push(nftExpr`${peerAddr} != @${c.cidrSet(peer.except)}`);
      }
      if (port.kind === 'proto') parts.push(nftExpr`meta l4proto ${port.proto}`);
      if (port.kind === 'range') parts.push(port.from === port.to ? nftExpr`meta l4proto ${port.proto} th dport ${port.from}` : nftExpr`meta l4proto ${port.proto} th dport ${port.from}-${port.to}`);
      if (port.kind === 'named') {
        // Ingress: the name is looked up on the destination, the policy's own pods; egress: on the
        // peer pods (every pod when the peer is an ipBlock or absent).
        const holder = dir === 'in' ? c.target : peer.kind === 'pods' ? peer.scope : { nsSel: {} };
        parts.push(nftExpr`ip daddr . meta l4proto . th dport @${c.namedPortSet(holder, port.name, port.proto)}`);
      }
      parts.push(nftExpr`accept`);
      out.push(parts.reduce((a, b) => nftExpr`${a} ${b}`));
    }
  }
  return out;
}

function network(c: Cidr4): Cidr4 {
  return { ip: maskIPv4(c.ip, c.prefix), prefix: c.prefix };
}

/** Drops prefixes inside another of the list (an interval set refuses overlapping elements). */
function dropCovered(cs: readonly Cidr4[]): Cidr4[] {
  const uniq = [...new Map(cs.map((c) => [`${c.ip}/${c.prefix}`, c])).values()];
  return uniq.filter((c) => !uniq.some((o) => o !== c && o.prefix < c.prefix && o.ip <= c.ip && lastIPv4(c) <= lastIPv4(o)));
}

function commentOf(s: string): string {
  const clean = s.replace(/[^A-Za-z0-9_.:/@=+,-]+/g, ' ').trim().replace(/\s+/g, ' ');
  return clean.length > 120 ? `${clean.slice(0, 107)} ${hash(s, 12)}` : clean || 'weft';
}

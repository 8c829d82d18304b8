// One NetworkPolicy -> its chains' rules and the sets they refer to (pure). A policy's rules depend
// on the policy alone, because sets are named by their content (selector, port name, prefixes), not
// by their members: compile once per policy version, fill the sets from the pods on every pass.
import { createHash } from 'node:crypto';
import { nftExpr, type NftExpr } from '../../lib/netfilter/expr.ts';
import { taggedRule, type TableRule } from '../../lib/netfilter/table-diff.ts';
import { formatIPv4, maskIPv4, parseCidr4Loose, lastIPv4, type Cidr4 } from '../../lib/ip/ipv4.ts';
import { selectorKey } from './selector.ts';
import type { LabelSelector, Policy, PolicyPeer, PolicyPort, PolicyRule } from './types.ts';

/** Where pods come from: one namespace, or namespaces matching a selector; then an optional pod selector. */
export interface Scope {
  ns?: string;
  nsSel?: LabelSelector;
  podSel?: LabelSelector;
}

export const PROTOCOLS: Record<string, 'tcp' | 'udp' | 'sctp'> = { TCP: 'tcp', UDP: 'udp', SCTP: 'sctp' };

/** A set a compiled policy refers to; its elements are filled from the pods on every pass. */
export type SetRequest = { kind: 'pods'; scope: Scope } | { kind: 'named'; scope: Scope; port: string; proto: 'tcp' | 'udp' | 'sctp' } | { kind: 'block'; cidrs: readonly Cidr4[] };

/** One direction of a policy: its chain, the base chain's jump to it, and its drop-counting rule with its named counter. */
export interface CompiledDirection {
  chain: string;
  rules: TableRule[];
  jump: TableRule;
  drop: TableRule;
  counter: string;
}

/** A policy's rules, which depend on the policy alone (set names name content, not members). */
export interface CompiledPolicy {
  target: Scope;
  targetSet: string;
  ingress?: CompiledDirection;
  egress?: CompiledDirection;
  requests: Map<string, SetRequest>;
}


export function podSetName(s: Scope): string {
  return `s-${hash(`pods ${scopeKey(s)}`)}`;
}

function namedSetName(s: Scope, port: string, proto: string): string {
  return `n-${hash(`named ${scopeKey(s)} port=${port}/${proto}`)}`;
}

export function blockElements(cidrs: readonly Cidr4[]): string[] {
  return dropCovered(cidrs).map((c) => (c.prefix === 32 ? formatIPv4(c.ip) : `${formatIPv4(c.ip)}/${c.prefix}`)).sort();
}

function blockSetName(cidrs: readonly Cidr4[]): string {
  return `b-${hash(`block ${blockElements(cidrs).join(',')}`)}`;
}

/** A policy -> its chains' rules and the sets they use (pure; cached by content). */
export function compilePolicy(pol: Policy): CompiledPolicy {
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
    const counter = `ci-${hash(key)}`;
    out.ingress = {
      chain, counter, jump: taggedRule(nftExpr`jump ${chain}`, key), drop: taggedRule(nftExpr`ip daddr @${targetSet} counter name ${counter}`, `drop ${key}`),
      rules: [taggedRule(nftExpr`ip daddr != @${targetSet} return`, key), ...pol.ingress.flatMap((r) => clauses(ctx, r, 'in').map((e) => taggedRule(e, key)))],
    };
  }
  if (pol.types.egress) {
    const chain = `pe-${hash(key)}`;
    const counter = `ce-${hash(key)}`;
    out.egress = {
      chain, counter, jump: taggedRule(nftExpr`jump ${chain}`, key), drop: taggedRule(nftExpr`ip saddr @${targetSet} counter name ${counter}`, `drop ${key}`),
      rules: [taggedRule(nftExpr`ip saddr != @${targetSet} return`, key), ...pol.egress.flatMap((r) => clauses(ctx, r, 'eg').map((e) => taggedRule(e, key)))],
    };
  }
  return out;
}

const hashMemo = new Map<string, string>();

export function hash(s: string, n = 12): string {
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

export function scopeKey(s: Scope): string {
  return `${s.ns !== undefined ? `ns=${s.ns}` : `nsSel=${selectorKey(s.nsSel ?? {})}`} pods=${s.podSel === undefined ? '*' : selectorKey(s.podSel)}`;
}

/** The set of a peer `podSelector` in `namespace` (benchmarks and tests look elements up in it). */
export function peerSetName(namespace: string, podSelector: LabelSelector): string {
  return podSetName({ ns: namespace, podSel: podSelector });
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

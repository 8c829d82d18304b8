// One NetworkPolicy -> its chains' rules and the sets they refer to (pure). A policy's rules depend
// on the policy alone, because sets are named by their content (selector, port name, prefixes), not
// by their members: compile once per policy version, fill the sets from the pods on every pass.
// IPv4 and IPv6: each rule that names addresses has a twin per family (`ip` / `ip6`, sets of
// ipv4_addr / ipv6_addr); an ipBlock applies to its own family only; rules naming no address serve both.
import { createHash } from 'node:crypto';
import { nftExpr, type NftExpr } from '../../lib/netfilter/expr.ts';
import { taggedRule, type TableRule } from '../../lib/netfilter/table-diff.ts';
import { formatIp, type Family } from '../../lib/ip/addr.ts';
import { canonicalCidr, lastOf, parseCidr, type Cidr } from '../../lib/ip/cidr.ts';
import { selectorKey } from './selector.ts';
import type { LabelSelector, Policy, PolicyPeer, PolicyPort, PolicyRule } from './types.ts';

/** Where pods come from: one namespace, or namespaces matching a selector; then an optional pod selector. */
export interface Scope {
  ns?: string;
  nsSel?: LabelSelector;
  podSel?: LabelSelector;
}

export const PROTOCOLS: Record<string, 'tcp' | 'udp' | 'sctp'> = { TCP: 'tcp', UDP: 'udp', SCTP: 'sctp' };

/** The address families a table serves: IPv4 always, IPv6 when the cluster has any IPv6 address. */
export type Families = readonly Family[];

/** A set a compiled policy refers to; its elements are filled from the pods on every pass. */
export type SetRequest =
  | { kind: 'pods'; family: Family; scope: Scope }
  | { kind: 'named'; family: Family; scope: Scope; port: string; proto: 'tcp' | 'udp' | 'sctp' }
  | { kind: 'block'; family: Family; cidrs: readonly Cidr[] };

/** One direction of a policy: its chain, the group chains' jump to it, and the named counter of its drops. */
export interface CompiledDirection {
  chain: string;
  rules: TableRule[];
  jump: TableRule;
  counter: string;
}

/** A policy's rules, which depend on the policy alone (set names name content, not members). */
export interface CompiledPolicy {
  target: Scope;
  /** The set of the policy's own pods, per family. */
  targetSets: Partial<Record<Family, string>>;
  ingress?: CompiledDirection;
  egress?: CompiledDirection;
  requests: Map<string, SetRequest>;
}

const SUFFIX: Record<Family, string> = { 4: '', 6: '6' };

/** The set of a scope's pod addresses of one family. */
export function podSetName(s: Scope, family: Family = 4): string {
  return `s${SUFFIX[family]}-${hash(`pods ${scopeKey(s)}`)}`;
}

function namedSetName(s: Scope, port: string, proto: string, family: Family): string {
  return `n${SUFFIX[family]}-${hash(`named ${scopeKey(s)} port=${port}/${proto}`)}`;
}

/** An ipBlock's prefixes as set elements (a host prefix as a bare address), covered ones left out, sorted. */
export function blockElements(cidrs: readonly Cidr[]): string[] {
  return dropCovered(cidrs).map((c) => (c.prefix === (c.addr.family === 4 ? 32 : 128) ? formatIp(c.addr) : `${formatIp(c.addr)}/${c.prefix}`)).sort();
}

function blockSetName(cidrs: readonly Cidr[], family: Family): string {
  return `b${SUFFIX[family]}-${hash(`block ${blockElements(cidrs).join(',')}`)}`;
}

/** A policy -> its chains' rules and the sets they use, for the given families (pure; cached by content). */
export function compilePolicy(pol: Policy, families: Families = [4]): CompiledPolicy {
  const key = `${pol.namespace}/${pol.name}`;
  const target: Scope = { ns: pol.namespace, podSel: pol.podSelector };
  const requests = new Map<string, SetRequest>();
  const note = (name: string, r: SetRequest): string => {
    requests.set(name, r);
    return name;
  };
  const targetSets: Partial<Record<Family, string>> = {};
  for (const f of families) targetSets[f] = note(podSetName(target, f), { kind: 'pods', family: f, scope: target });
  const ctx: ClauseCtx = {
    pol, target, families,
    podSet: (scope, family) => note(podSetName(scope, family), { kind: 'pods', family, scope }),
    namedPortSet: (scope, port, proto, family) => note(namedSetName(scope, port, proto, family), { kind: 'named', family, scope, port, proto }),
    cidrSet: (cidrs, family) => note(blockSetName(cidrs, family), { kind: 'block', family, cidrs }),
  };
  const out: CompiledPolicy = { target, targetSets, requests };
  for (const dir of ['ingress', 'egress'] as const) {
    if (!pol.types[dir]) continue;
    const chain = `${dir === 'ingress' ? 'pi' : 'pe'}-${hash(key)}`;
    const counter = `${dir === 'ingress' ? 'ci' : 'ce'}-${hash(key)}`;
    const own = (f: Family): NftExpr => ownAddr(f, dir);
    out[dir] = {
      chain, counter,
      jump: taggedRule(nftExpr`jump ${chain}`, key),
      rules: [
        ...families.map((f) => taggedRule(nftExpr`${own(f)} != @${targetSets[f] ?? ''} return`, key)),
        ...pol[dir].flatMap((r) => clauses(ctx, r, dir === 'ingress' ? 'in' : 'eg').map((e) => taggedRule(e, key))),
      ],
    };
  }
  return out;
}

/** The selected pod's address in a direction: its destination for ingress, its source for egress. */
function ownAddr(f: Family, dir: 'ingress' | 'egress'): NftExpr {
  if (f === 4) return dir === 'ingress' ? nftExpr`ip daddr` : nftExpr`ip saddr`;
  return dir === 'ingress' ? nftExpr`ip6 daddr` : nftExpr`ip6 saddr`;
}

/** The peer's address: the source for ingress, the destination for egress. */
function peerAddr(f: Family, dir: 'in' | 'eg'): NftExpr {
  return ownAddr(f, dir === 'in' ? 'egress' : 'ingress');
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

const scopeKeys = new WeakMap<Scope, string>();

/** A scope's canonical text, once per scope object (a compiled policy's scopes are never changed). */
export function scopeKey(s: Scope): string {
  let k = scopeKeys.get(s);
  if (k === undefined) scopeKeys.set(s, (k = `${s.ns !== undefined ? `ns=${s.ns}` : `nsSel=${selectorKey(s.nsSel ?? {})}`} pods=${s.podSel === undefined ? '*' : selectorKey(s.podSel)}`));
  return k;
}

/** The IPv4 (or IPv6) set of a peer `podSelector` in `namespace` (benchmarks and tests look elements up in it). */
export function peerSetName(namespace: string, podSelector: LabelSelector, family: Family = 4): string {
  return podSetName({ ns: namespace, podSel: podSelector }, family);
}

interface ClauseCtx {
  pol: Policy;
  target: Scope;
  families: Families;
  podSet(s: Scope, f: Family): string;
  namedPortSet(s: Scope, port: string, proto: 'tcp' | 'udp' | 'sctp', f: Family): string;
  cidrSet(c: readonly Cidr[], f: Family): string;
}

type PeerMatch = { kind: 'any' } | { kind: 'pods'; scope: Scope } | { kind: 'block'; family: Family; cidrs: Cidr[]; except: Cidr[] };
type PortMatch = { kind: 'any' } | { kind: 'proto'; proto: 'tcp' | 'udp' | 'sctp' } | { kind: 'range'; proto: 'tcp' | 'udp' | 'sctp'; from: number; to: number } | { kind: 'named'; proto: 'tcp' | 'udp' | 'sctp'; name: string };

/** An ipBlock's CIDR (host bits cleared, as the API server keeps it valid); null when unparsable. */
export function parseBlockCidr(s: string): Cidr | null {
  const c = parseCidr(s);
  return c === null ? null : canonicalCidr(c);
}

function peerMatch(pol: Policy, p: PolicyPeer): PeerMatch | undefined {
  if (p.ipBlock !== undefined) {
    const c = parseBlockCidr(p.ipBlock.cidr);
    if (c === null) return undefined;
    const except = (p.ipBlock.except ?? []).map(parseBlockCidr).filter((x): x is Cidr => x !== null && x.addr.family === c.addr.family);
    return { kind: 'block', family: c.addr.family, cidrs: [c], except };
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

/**
 * The accept rules of one ingress/egress rule: every peer x every port (an empty list means all), per
 * family where the rule names addresses, once where it names none (ports only, or nothing).
 */
function clauses(c: ClauseCtx, r: PolicyRule, dir: 'in' | 'eg'): NftExpr[] {
  const peers: PeerMatch[] = r.peers === undefined || r.peers.length === 0 ? [{ kind: 'any' }] : r.peers.map((p) => peerMatch(c.pol, p)).filter((x): x is PeerMatch => x !== undefined);
  const ports: PortMatch[] = r.ports === undefined || r.ports.length === 0 ? [{ kind: 'any' }] : r.ports.map(portMatch).filter((x): x is PortMatch => x !== undefined);
  const out: NftExpr[] = [];
  for (const peer of peers) {
    for (const port of ports) {
      const familyFree = peer.kind === 'any' && port.kind !== 'named';
      for (const f of familyFree ? [4 as Family] : c.families) {
        if (peer.kind === 'block' && peer.family !== f) continue;
        const parts: NftExpr[] = [];
        const pa = peerAddr(f, dir);
        if (peer.kind === 'pods' && !(dir === 'eg' && port.kind === 'named')) parts.push(nftExpr`${pa} @${c.podSet(peer.scope, f)}`);
        if (peer.kind === 'block') {
          parts.push(nftExpr`${pa} @${c.cidrSet(peer.cidrs, f)}`);
          if (peer.except.length > 0) parts.push(nftExpr`${pa} != @${c.cidrSet(peer.except, f)}`);
        }
        if (port.kind === 'proto') parts.push(nftExpr`meta l4proto ${port.proto}`);
        if (port.kind === 'range') parts.push(port.from === port.to ? nftExpr`meta l4proto ${port.proto} th dport ${port.from}` : nftExpr`meta l4proto ${port.proto} th dport ${port.from}-${port.to}`);
        if (port.kind === 'named') {
          // Ingress: the name is looked up on the destination, the policy's own pods; egress: on the
          // peer pods (every pod when the peer is an ipBlock or absent).
          const holder = dir === 'in' ? c.target : peer.kind === 'pods' ? peer.scope : { nsSel: {} };
          const da = f === 4 ? nftExpr`ip daddr` : nftExpr`ip6 daddr`;
          parts.push(nftExpr`${da} . meta l4proto . th dport @${c.namedPortSet(holder, port.name, port.proto, f)}`);
        }
        parts.push(nftExpr`accept`);
        out.push(parts.reduce((a, b) => nftExpr`${a} ${b}`));
      }
    }
  }
  return out;
}

/** Drops prefixes inside another of the list (an interval set refuses overlapping elements). */
function dropCovered(cs: readonly Cidr[]): Cidr[] {
  const uniq = [...new Map(cs.map((c) => [`${formatIp(c.addr)}/${c.prefix}`, c])).values()];
  const inside = (c: Cidr, o: Cidr): boolean => o.addr.family === c.addr.family && o.prefix < c.prefix && o.addr.value <= c.addr.value && lastOf(c).value <= lastOf(o).value;
  return uniq.filter((c) => !uniq.some((o) => o !== c && inside(c, o)));
}

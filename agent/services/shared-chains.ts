// The shared chains of weft's Service table: choosing chains per family, protocol, slot kind and
// capacity (numgen tries into a shared endpoint map), behaviour chains per family and protocol
// (masquerade, ETP Local's short-circuit, the affinity lookup, then a second verdict-map lookup of
// the key's choosing chain), and the affinity recorder of one timeout. No chain belongs to a
// Service: their number does not grow with Services. Pure text.
import { familyOfText } from '../../lib/ip/index.ts';
import { AFFINITY_MAP } from './content.ts';
import { SHARED_CAPACITIES, SLOT_TRIES, sharedMap, type SlotKind } from './slots.ts';
import type { ProxyNodeConfig } from './types.ts';

/** nft's address family keyword for a family. */
export function ipKw(family: 4 | 6): 'ip' | 'ip6' {
  return family === 4 ? 'ip' : 'ip6';
}

const P = (proto: 'tcp' | 'udp') => (proto === 'tcp' ? 't' : 'u');
const PICK_PREFIX: Record<SlotKind, string> = { ep: 'svcc', epl: 'pkl', epn: 'pkn', epnl: 'pknl' };

/** The choosing chain of a slot kind, family, protocol and capacity (`svcc4t-16`: a ClusterIP's or external address's endpoints). */
export function pickChainName(kind: SlotKind, family: 4 | 6, proto: 'tcp' | 'udp', cap: number): string {
  return `${PICK_PREFIX[kind]}${family}${P(proto)}-${cap}`;
}

/**
 * The rules choosing one of the endpoints in map `map` of capacity `cap`, `key` the packet's part of
 * the map key before the slot: a few tries at a slot below the capacity (a try at an empty slot
 * falls through to the next), then a last one below cap/2, where every slot is filled. Each try hits
 * with probability >= 1/2, so the last rule takes at most 1/2^SLOT_TRIES of new connections.
 */
export function slotRules(proto: 'tcp' | 'udp', family: 4 | 6, map: string, cap: number, key = ''): string[] {
  const rule = (mod: number) => `meta l4proto ${proto} dnat ${ipKw(family)} to ${key}numgen random mod ${mod} map @${map}`;
  if (cap <= 1) return [rule(1)];
  return [...Array.from({ length: SLOT_TRIES }, () => rule(cap)), rule(cap / 2)];
}

/** Sources outside the cluster networks of `family` (`!=`) or inside them (`==`), or undefined without any. */
function clusterSources(family: 4 | 6, node: ProxyNodeConfig, op: '!=' | ''): string | undefined {
  const cidrs = node.clusterCidrs.filter((x) => familyOfText(x.split('/')[0] ?? '') === family);
  if (cidrs.length === 0) return undefined;
  return `${ipKw(family)} saddr ${op === '' ? '' : '!= '}{ ${cidrs.join(', ')} }`;
}

/**
 * The rules of a choosing chain. `ep` chains (svcc-) masquerade off-cluster sources first: they are
 * a ClusterIP's chain, and the short-circuit's for in-cluster sources, where the rule never matches.
 */
export function sharedChainRules(family: 4 | 6, proto: 'tcp' | 'udp', cap: number, node: ProxyNodeConfig, kind: SlotKind = 'ep'): string[] {
  const ip = ipKw(family);
  const key = kind === 'ep' || kind === 'epl' ? `${ip} daddr . ${proto} dport . ` : `${proto} dport . `;
  const masq = kind === 'ep' ? clusterSources(family, node, '!=') : undefined;
  return [...(masq !== undefined ? [`${masq} jump mark-masq`] : []), ...slotRules(proto, family, sharedMap(family, proto, kind), cap, key)];
}

/** What a Service key asks of its traffic before an endpoint is chosen. */
export type Behaviour = 'cluster' | 'ext' | 'extLocal' | 'nodePort' | 'nodePortLocal';
const BEHAVIOUR_PREFIX: Record<Behaviour, string> = { cluster: 'svca', ext: 'ext', extLocal: 'etl', nodePort: 'npx', nodePortLocal: 'npetl' };

/** The behaviour chain of a family and protocol, with or without the affinity lookup (`ext4t`, `etla4t`). ClusterIP without affinity has none (svc4 points at its choosing chain). */
export function behaviourChain(b: Behaviour, family: 4 | 6, proto: 'tcp' | 'udp', affinity: boolean): string {
  const prefix = BEHAVIOUR_PREFIX[b];
  return `${prefix}${b !== 'cluster' && affinity ? 'a' : ''}${family}${P(proto)}`;
}

/** Every behaviour chain with its rules (affinity variants for IPv4 only: nft 1.0.6 cannot generate the IPv6 recorder). */
export function behaviourChains(family: 4 | 6, proto: 'tcp' | 'udp', node: ProxyNodeConfig): Array<{ name: string; rules: string[] }> {
  const ip = ipKw(family);
  const addr = `${ip} daddr . meta l4proto . th dport`;
  const np = 'meta l4proto . th dport';
  const affLookup = `meta l4proto ${proto} dnat ${ip} to ${ip} saddr . ${ip} daddr . meta l4proto . th dport map @${AFFINITY_MAP}`;
  const inCluster = clusterSources(family, node, '');
  const offCluster = clusterSources(family, node, '!=');
  // kube-proxy's order: in-cluster sources first (source kept), then the node itself (masqueraded), both to every endpoint; the rest to local ones.
  const local = (key: string, pick: string, pickLocal: string, aff: boolean): string[] => [
    ...(aff ? [`fib saddr type local ${offCluster !== undefined ? `${offCluster} ` : ''}jump mark-masq`, affLookup] : []),
    ...(inCluster !== undefined ? [`${inCluster} ${key} vmap @${pick}${family}`] : []),
    ...(aff ? [] : ['fib saddr type local jump mark-masq']),
    `fib saddr type local ${key} vmap @${pick}${family}`,
    `${key} vmap @${pickLocal}${family}`,
  ];
  const out: Array<{ name: string; rules: string[] }> = [];
  for (const aff of family === 4 ? [false, true] : [false]) {
    const lookup = aff ? [affLookup] : [];
    if (aff) out.push({ name: behaviourChain('cluster', family, proto, true), rules: [...(offCluster !== undefined ? [`${offCluster} jump mark-masq`] : []), affLookup, `${addr} vmap @pick${family}`] });
    out.push({ name: behaviourChain('ext', family, proto, aff), rules: ['jump mark-masq', ...lookup, `${addr} vmap @pick${family}`] });
    out.push({ name: behaviourChain('extLocal', family, proto, aff), rules: local(addr, 'pick', 'pickl', aff) });
    out.push({ name: behaviourChain('nodePort', family, proto, aff), rules: ['jump mark-masq', ...lookup, `${np} vmap @picknp${family}`] });
    out.push({ name: behaviourChain('nodePortLocal', family, proto, aff), rules: local(np, 'picknp', 'picknpl', aff) });
  }
  return out;
}

/** Every shared chain of the skeleton with its rules: choosing chains of every kind and capacity, then behaviour chains. */
export function sharedChains(node: ProxyNodeConfig): Array<{ name: string; rules: string[] }> {
  const out: Array<{ name: string; rules: string[] }> = [];
  for (const family of [4, 6] as const) {
    for (const proto of ['tcp', 'udp'] as const) {
      for (const kind of ['ep', 'epl', 'epn', 'epnl'] as const) {
        for (const cap of SHARED_CAPACITIES) out.push({ name: pickChainName(kind, family, proto, cap), rules: sharedChainRules(family, proto, cap, node, kind) });
      }
      out.push(...behaviourChains(family, proto, node));
    }
  }
  return out;
}

/** The names of the skeleton's shared chains (they do not depend on the node's configuration). */
export const SHARED_CHAIN_NAMES: readonly string[] = sharedChains({ nodeName: '', clusterCidrs: [], nodePortAddresses: [] }).map((c) => c.name);

/** The recorder chain of an affinity timeout (shared by every Service port with that timeout). */
export function affinityRecorderName(seconds: number): string {
  return `affrec4-${seconds}`;
}

/**
 * The recorder's rule, run in filter hooks after DNAT on a connection's first packet: client .
 * original destination . protocol . original port -> the endpoint DNAT chose, with the timeout
 * (`update` refreshes it on each new connection, as kube-proxy's affinity sets are refreshed).
 */
export function affinityRecorderRules(seconds: number): string[] {
  return [`meta l4proto { tcp, udp } update @${AFFINITY_MAP} { ip saddr . ct original ip daddr . meta l4proto . ct original proto-dst timeout ${seconds}s : ip daddr . th dport }`];
}

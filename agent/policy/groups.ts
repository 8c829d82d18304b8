// The group verdict maps of weft's policy table (pure): a base chain looks its isolated local pod's
// address up in one verdict map and jumps to the chain of the policies that select that address, so
// a new connection walks only those policies, not every policy of the cluster. Addresses selected by
// the same policies share one group chain (named by a hash of its member list); decision 4 holds:
// one element per local address, one chain per distinct set of selecting policies.
import { nftExpr } from '../../lib/netfilter/expr.ts';
import { mapElementKey } from '../../lib/netfilter/map-elements.ts';
import { taggedRule, type TableChain, type TableRule, type TableSet } from '../../lib/netfilter/table-diff.ts';
import { familyOfText } from '../../lib/ip/addr.ts';
import { hash } from './compile.ts';

/** The verdict maps: an isolated local address -> `jump` its group chain, by direction and family. */
export const MAP_IN = 'in-groups';
export const MAP_EG = 'eg-groups';
export const MAP_IN6 = 'in-groups6';
export const MAP_EG6 = 'eg-groups6';

/** The policies selecting one local address in one direction, in the table's policy order, with their jumps and drop counters. */
export interface AddrPolicies {
  keys: string[];
  jumps: TableRule[];
  counts: TableRule[];
}

/** Notes that policy `key` (whose jump is `jump`, whose drop counter is `counter`) selects `ip`; policies must come in the table's order. */
export function noteSelecting(byIp: Map<string, AddrPolicies>, ip: string, key: string, jump: TableRule, counter: string): void {
  let e = byIp.get(ip);
  if (e === undefined) byIp.set(ip, (e = { keys: [], jumps: [], counts: [] }));
  // Two local pods may share an address (a stale Pod object): the address's group is their union.
  if (e.keys[e.keys.length - 1] === key) return;
  e.keys.push(key);
  e.jumps.push(jump);
  e.counts.push(taggedRule(nftExpr`counter name ${counter}`, `drop ${key}`));
}

/** The group chain of a member list, by direction (`gi-`, `ge-`). */
export function groupChainName(dir: 'ingress' | 'egress', keys: readonly string[]): string {
  return `${dir === 'ingress' ? 'gi' : 'ge'}-${hash(`group ${keys.join(' ')}`)}`;
}

/** One direction's group chains, its maps (IPv6 ones when `v6`) and the base chain's lookups. */
export function groupTable(dir: 'ingress' | 'egress', byIp: ReadonlyMap<string, AddrPolicies>, v6: boolean): { chains: Map<string, TableChain>; maps: Map<string, TableSet>; lookups: TableRule[] } {
  const found = new Map<string, TableChain>();
  const els = { 4: new Set<string>(), 6: new Set<string>() };
  for (const [ip, e] of byIp) {
    const chain = groupChainName(dir, e.keys);
    // A packet that falls through every member's jump is dropped by the base chain's deny next: it
    // is counted here for each member, so a denied connection walks the selecting policies only.
    if (!found.has(chain)) found.set(chain, { rules: [...e.jumps, ...e.counts] });
    els[familyOfText(ip) === 6 ? 6 : 4].add(mapElementKey(ip, `jump ${chain}`));
  }
  // Named in order, so that the table does not depend on the order pods arrived in.
  const chains = new Map([...found].sort(([a], [b]) => (a < b ? -1 : 1)));
  const ing = dir === 'ingress';
  const [m4, m6] = ing ? [MAP_IN, MAP_IN6] : [MAP_EG, MAP_EG6];
  const what = ing ? 'ingress' : 'egress';
  const maps = new Map<string, TableSet>([[m4, { spec: { type: 'ipv4_addr', data: 'verdict', comment: `local pods isolated for ${what}: their group chain` }, elements: els[4] }]]);
  const lookups = [taggedRule(ing ? nftExpr`ip daddr vmap @${m4}` : nftExpr`ip saddr vmap @${m4}`, 'groups')];
  if (v6) {
    maps.set(m6, { spec: { type: 'ipv6_addr', data: 'verdict', comment: `local pods isolated for ${what} ipv6: their group chain` }, elements: els[6] });
    lookups.push(taggedRule(ing ? nftExpr`ip6 daddr vmap @${m6}` : nftExpr`ip6 saddr vmap @${m6}`, 'groups ipv6'));
  }
  return { chains, maps, lookups };
}

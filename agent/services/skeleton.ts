// The fixed part of weft's Service table: base chains hooked into nat and filter, the lookup chain
// (address . protocol . port -> verdict map: O(1) in Services), the shared maps and chains every
// Service port is served by, the affinity recorder's hook, masquerade and reject. Pure text.
import { createHash } from 'node:crypto';
import { AFFINITY_MAP, DYNAMIC_MAPS, DYNAMIC_SETS, MASQ_MARK, SVC_TABLE } from './content.ts';
import { familyOfText } from '../../lib/ip/index.ts';
import type { ProxyNodeConfig } from './types.ts';
import { SHARED_CHAIN_NAMES, sharedChains } from './shared-chains.ts';
import { SHARED_MAPS } from './slots.ts';

const BASE_CHAINS = ['nat-prerouting', 'nat-output', 'nat-postrouting', 'services', 'mark-masq', 'filter-input', 'filter-forward', 'filter-output', 'no-endpoints', 'affinity-record', 'reject-chain'] as const;

/** Chains that are part of the skeleton: the base ones and the shared choosing and behaviour chains. */
export const FIXED_CHAINS: readonly string[] = [...BASE_CHAINS, ...SHARED_CHAIN_NAMES];

/** Clients the shared affinity map holds at most (nft's default for a dynamic map is 65,535). */
export const AFFINITY_CLIENTS = 1_048_576;

/** The comment on the first rule of each shared chain: a digest of its rules (they depend on the cluster networks), which doctor compares. */
export function sharedChainComments(node: ProxyNodeConfig): Map<string, string> {
  return new Map(sharedChains(node).map((c) => [c.name, digest(c.rules)]));
}

function digest(rules: readonly string[]): string {
  return createHash('sha256').update(rules.join('\n')).digest('hex').slice(0, 12);
}

const T = `${SVC_TABLE.family} ${SVC_TABLE.name}`;

/** The NodePort address test of a family: --nodeport-addresses' set, else every local address but loopback. */
function nodePortMatch(family: 4 | 6, node: ProxyNodeConfig): string | undefined {
  const ip = family === 4 ? 'ip' : 'ip6';
  const cidrs = node.nodePortAddresses.filter((c) => familyOfText(c.split('/')[0] ?? '') === family);
  if (node.nodePortAddresses.length > 0) return cidrs.length === 0 ? undefined : `fib daddr type local ${ip} daddr { ${cidrs.join(', ')} }`;
  return `fib daddr type local ${ip} daddr != ${family === 4 ? '127.0.0.0/8' : '::1'}`;
}

/** The nft commands that create (or bring back) the skeleton: idempotent `add`s, then fixed chains flushed and refilled. */
export function skeletonScript(node: ProxyNodeConfig): string[] {
  const out = [`add table ${T}`];
  for (const [name, decl] of Object.entries(DYNAMIC_MAPS)) out.push(`add map ${T} ${name} { ${decl}; }`);
  for (const [name, decl] of Object.entries(DYNAMIC_SETS)) out.push(`add set ${T} ${name} { ${decl}; }`);
  // The shared endpoint maps: Service address . port . slot (or nodePort . slot) -> endpoint, per kind, family and protocol.
  for (const m of SHARED_MAPS) {
    const ip = m.family === 4 ? 'ip' : 'ip6';
    const key = m.kind === 'ep' || m.kind === 'epl' ? `${ip} daddr . ${m.proto} dport` : `${m.proto} dport`;
    out.push(`add map ${T} ${m.name} { typeof ${key} . numgen random mod 2 : ${ip} daddr . ${m.proto} dport; }`);
  }
  // IPv4 only: nft 1.0.6 aborts generating the IPv6 recorder's update (netlink_linearize.c: dreg < ctx->reg_low).
  out.push(`add map ${T} ${AFFINITY_MAP} { type ipv4_addr . ipv4_addr . inet_proto . inet_service : ipv4_addr . inet_service; size ${AFFINITY_CLIENTS}; flags dynamic,timeout; timeout 3h; }`);
  const base: Record<string, string> = {
    'nat-prerouting': 'type nat hook prerouting priority dstnat; policy accept;',
    'nat-output': 'type nat hook output priority -100; policy accept;',
    'nat-postrouting': 'type nat hook postrouting priority srcnat; policy accept;',
    // After DNAT (dstnat is -100): an address still unchanged here had nothing to go to.
    'filter-input': 'type filter hook input priority -90; policy accept;',
    'filter-forward': 'type filter hook forward priority -90; policy accept;',
    'filter-output': 'type filter hook output priority -90; policy accept;',
  };
  for (const name of FIXED_CHAINS) out.push(`add chain ${T} ${name}${base[name] !== undefined ? ` { ${base[name]} }` : ''}`);
  for (const name of FIXED_CHAINS) out.push(`flush chain ${T} ${name}`);
  const rule = (chain: string, r: string) => out.push(`add rule ${T} ${chain} ${r}`);
  rule('nat-prerouting', 'jump services');
  rule('nat-output', 'jump services');
  rule('services', 'ip daddr . meta l4proto . th dport vmap @svc4');
  rule('services', 'ip6 daddr . meta l4proto . th dport vmap @svc6');
  for (const f of [4, 6] as const) {
    const m = nodePortMatch(f, node);
    if (m !== undefined) rule('services', `${m} meta l4proto . th dport vmap @np${f}`);
  }
  rule('mark-masq', `meta mark set meta mark | ${hex(MASQ_MARK)}`);
  rule('nat-postrouting', 'ct status dnat ip saddr . ip daddr @hairpin4 masquerade');
  rule('nat-postrouting', 'ct status dnat ip6 saddr . ip6 daddr @hairpin6 masquerade');
  rule('nat-postrouting', `meta mark & ${hex(MASQ_MARK)} == ${hex(MASQ_MARK)} meta mark set meta mark & ${hex(~MASQ_MARK >>> 0)} masquerade fully-random`);
  for (const c of ['filter-input', 'filter-forward', 'filter-output']) {
    rule(c, 'ct state new jump no-endpoints');
    rule(c, 'ct state new ct status dnat jump affinity-record');
  }
  // The original destination of a new DNATed connection -> its Service's recorder (only Services with ClientIP affinity have elements).
  rule('affinity-record', 'meta l4proto { tcp, udp } ct original ip daddr . meta l4proto . ct original proto-dst vmap @affrec4');
  rule('affinity-record', 'meta nfproto ipv4 meta l4proto { tcp, udp } meta l4proto . ct original proto-dst vmap @affrecnp4');
  rule('no-endpoints', 'ip daddr . meta l4proto . th dport vmap @noep4');
  rule('no-endpoints', 'ip6 daddr . meta l4proto . th dport vmap @noep6');
  for (const f of [4, 6] as const) {
    const m = nodePortMatch(f, node);
    if (m !== undefined) rule('no-endpoints', `${m} meta l4proto . th dport vmap @noepnp${f}`);
  }
  // icmpx port-unreachable: ECONNREFUSED for TCP and UDP alike, as kube-proxy answers.
  rule('reject-chain', 'reject');
  for (const c of sharedChains(node)) c.rules.forEach((r, i) => rule(c.name, i === 0 ? `${r} comment "${digest(c.rules)}"` : r));
  return out;
}

function hex(n: number): string {
  return `0x${n.toString(16).padStart(8, '0')}`;
}

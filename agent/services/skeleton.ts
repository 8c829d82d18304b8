// The fixed part of weft's Service table: base chains hooked into nat and filter, the lookup chain
// (address . protocol . port -> verdict map: O(1) in Services), masquerade and reject. Pure text.
import { DYNAMIC_MAPS, DYNAMIC_SETS, MASQ_MARK, SVC_TABLE } from './content.ts';
import { familyOfText } from '../../lib/ip/index.ts';
import type { ProxyNodeConfig } from './types.ts';
import { sharedChainName, sharedChainRules } from './render.ts';
import { SHARED_CAPACITIES, sharedMap } from './slots.ts';

const BASE_CHAINS = ['nat-prerouting', 'nat-output', 'nat-postrouting', 'services', 'mark-masq', 'filter-input', 'filter-forward', 'filter-output', 'no-endpoints', 'reject-chain'] as const;
const SHARED_CHAINS = ([4, 6] as const).flatMap((f) => (['tcp', 'udp'] as const).flatMap((p) => SHARED_CAPACITIES.map((c) => ({ family: f, proto: p, cap: c, name: sharedChainName(f, p, c) }))));

/** Chains that are part of the skeleton (never unit chains): the base ones and the shared choosing chains. */
export const FIXED_CHAINS: readonly string[] = [...BASE_CHAINS, ...SHARED_CHAINS.map((c) => c.name)];

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
  // The shared endpoint maps: Service address . port . slot -> endpoint, per family and protocol.
  for (const f of [4, 6] as const) {
    for (const p of ['tcp', 'udp'] as const) {
      const ip = f === 4 ? 'ip' : 'ip6';
      out.push(`add map ${T} ${sharedMap(f, p)} { typeof ${ip} daddr . ${p} dport . numgen random mod 2 : ${ip} daddr . ${p} dport; }`);
    }
  }
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
  for (const c of ['filter-input', 'filter-forward', 'filter-output']) rule(c, 'ct state new jump no-endpoints');
  rule('no-endpoints', 'ip daddr . meta l4proto . th dport vmap @noep4');
  rule('no-endpoints', 'ip6 daddr . meta l4proto . th dport vmap @noep6');
  for (const f of [4, 6] as const) {
    const m = nodePortMatch(f, node);
    if (m !== undefined) rule('no-endpoints', `${m} meta l4proto . th dport vmap @noepnp${f}`);
  }
  // icmpx port-unreachable: ECONNREFUSED for TCP and UDP alike, as kube-proxy answers.
  rule('reject-chain', 'reject');
  for (const c of SHARED_CHAINS) for (const r of sharedChainRules(c.family, c.proto, c.cap, node)) rule(c.name, r);
  return out;
}

function hex(n: number): string {
  return `0x${n.toString(16).padStart(8, '0')}`;
}

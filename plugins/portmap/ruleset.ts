// The fixed portmap rule set in `inet weft`: four chains, four DNAT maps, four masquerade sets and
// ten rules, identical for 1 pod or 10,000 mappings; pods only add elements (one hash lookup per packet).
import type { NftBatch } from '../../lib/netfilter/batch.ts';
import { nftExpr, type NftExpr } from '../../lib/netfilter/expr.ts';
import type { NftDataType } from '../../lib/netfilter/types.ts';
import { PORTMAP_NAMES as N } from './names.ts';

// nft 1.0.6 accepts the `dstnat` priority name only in prerouting; -100 is NF_IP_PRI_NAT_DST
// (linux/netfilter_ipv4.h), the same value, for the output hook.
const NAT_DST_PRIORITY = -100;

/** The rules of each chain, in order. Exported for tests and the rule-count benchmark. */
export function portmapRules(): { chain: string; expr: NftExpr }[] {
  return [
    // Only destinations that are addresses of this node (fib: RTN_LOCAL, incl. 127.0.0.0/8), so
    // traffic routed through the node to another host's same port is left alone.
    { chain: N.preChain, expr: nftExpr`fib daddr type local jump ${N.dnatChain}` },
    { chain: N.outChain, expr: nftExpr`fib daddr type local jump ${N.dnatChain}` },
    // A dnat whose map lookup misses ends the rule (NFT_BREAK) and evaluation goes on, so the
    // address-specific maps are tried first, then the any-address ones.
    { chain: N.dnatChain, expr: nftExpr`dnat ip to ip daddr . meta l4proto . th dport map @${N.hostDnat4}` },
    { chain: N.dnatChain, expr: nftExpr`meta nfproto ipv4 dnat ip to meta l4proto . th dport map @${N.dnat4}` },
    { chain: N.dnatChain, expr: nftExpr`dnat ip6 to ip6 daddr . meta l4proto . th dport map @${N.hostDnat6}` },
    { chain: N.dnatChain, expr: nftExpr`meta nfproto ipv6 dnat ip6 to meta l4proto . th dport map @${N.dnat6}` },
    // `ct status dnat`: only flows some DNAT rewrote; the set key names source and new destination.
    { chain: N.postChain, expr: nftExpr`ct status dnat ip saddr . ip daddr . meta l4proto . th dport @${N.snat4} masquerade` },
    { chain: N.postChain, expr: nftExpr`ct status dnat ip6 saddr . ip6 daddr . meta l4proto . th dport @${N.snat6} masquerade` },
    { chain: N.postChain, expr: nftExpr`ct status dnat ip daddr . meta l4proto . th dport @${N.masq4} masquerade` },
    { chain: N.postChain, expr: nftExpr`ct status dnat ip6 daddr . meta l4proto . th dport @${N.masq6} masquerade` },
  ];
}

const DNAT_DATA = { 4: ['ipv4_addr', 'inet_service'], 6: ['ipv6_addr', 'inet_service'] } as const satisfies Record<4 | 6, readonly NftDataType[]>;
const ADDR = { 4: 'ipv4_addr', 6: 'ipv6_addr' } as const;

/**
 * Idempotent: appends to `b` the steps that (re)create portmap's chains, maps and sets (elements are
 * kept) and rewrite its four chains (flush + add, one atomic transaction, no listing needed). The
 * chains are portmap's alone, so rewriting them never touches another concern's rules.
 */
export function ensurePortmapRuleset(b: NftBatch): NftBatch {
  b.ensureTable();
  for (const fam of [4, 6] as const) {
    const a = ADDR[fam];
    b.ensureMap(fam === 4 ? N.dnat4 : N.dnat6, { type: ['inet_proto', 'inet_service'], data: DNAT_DATA[fam], comment: `portmap hostPort to pod v${fam}` });
    b.ensureMap(fam === 4 ? N.hostDnat4 : N.hostDnat6, { type: [a, 'inet_proto', 'inet_service'], data: DNAT_DATA[fam], comment: `portmap hostIP hostPort to pod v${fam}` });
    // interval: the source is a prefix (the pod's subnet); concatenated ranges use the pipapo backend.
    b.ensureSet(fam === 4 ? N.snat4 : N.snat6, { type: [a, a, 'inet_proto', 'inet_service'], flags: ['interval'], comment: `portmap hairpin and localhost masquerade v${fam}` });
    b.ensureSet(fam === 4 ? N.masq4 : N.masq6, { type: [a, 'inet_proto', 'inet_service'], comment: `portmap masqAll v${fam}` });
  }
  b.ensureChain(N.dnatChain);
  b.ensureChain(N.preChain, { type: 'nat', hook: 'prerouting', priority: 'dstnat', policy: 'accept' });
  b.ensureChain(N.outChain, { type: 'nat', hook: 'output', priority: NAT_DST_PRIORITY, policy: 'accept' });
  b.ensureChain(N.postChain, { type: 'nat', hook: 'postrouting', priority: 'srcnat', policy: 'accept' });
  for (const chain of [N.preChain, N.outChain, N.dnatChain, N.postChain]) b.flushChain(chain);
  for (const r of portmapRules()) b.appendRule(r.chain, r.expr);
  return b;
}

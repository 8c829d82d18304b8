// The firewall's rule set in `inet weft`: two shared base chains (isolation, unmark), one base chain per
// network with four rules over its pod address sets, and the admin chain. Constant in pods: a pod only
// adds set elements. Rendered as one `nft -f -` script together with the hooks into other tables.
import { NftBatch } from '../../lib/netfilter/batch.ts';
import { nftExpr, type NftExpr } from '../../lib/netfilter/expr.ts';
import { WEFT_TABLE } from '../../lib/netfilter/table.ts';
import { FW_MARK, FW_SHARED as S, MARK_PRIORITY, UNMARK_PRIORITY, adminJumpComment, fwNetworkNames } from './names.ts';

const MARK = FW_MARK;
const UNMASK = ~FW_MARK >>> 0;

/** The rules of each chain weft rewrites, in order (the admin jump, written separately, comes first in the network chain). */
export function firewallRules(network: string): { chain: string; expr: NftExpr }[] {
  const n = fwNetworkNames(network);
  return [
    // Reference CNI-ISOLATION-STAGE-1/2: from an isolated bridge to a different isolated bridge is dropped.
    // A drop is final in nftables whatever other chains say; same-bridge traffic (br_netfilter) passes.
    // ingressPolicy isolated: port to port within the bridge too (seen here only with br_netfilter).
    { chain: S.isolation, expr: nftExpr`iifname . oifname @${S.selfDrop} drop` },
    { chain: S.isolation, expr: nftExpr`iifname . oifname @${S.same} accept` },
    { chain: S.isolation, expr: nftExpr`iifname @${S.isolated} oifname @${S.isolated} drop` },
    { chain: S.unmark, expr: nftExpr`meta mark & ${MARK} == ${MARK} meta mark set meta mark & ${UNMASK}` },
    // Reference CNI-FORWARD, per pod address: everything from the pod, replies and related traffic to it.
    { chain: n.chain, expr: nftExpr`ip saddr @${n.pods4} meta mark set meta mark | ${MARK}` },
    { chain: n.chain, expr: nftExpr`ip daddr @${n.pods4} ct state established,related meta mark set meta mark | ${MARK}` },
    { chain: n.chain, expr: nftExpr`ip6 saddr @${n.pods6} meta mark set meta mark | ${MARK}` },
    { chain: n.chain, expr: nftExpr`ip6 daddr @${n.pods6} ct state established,related meta mark set meta mark | ${MARK}` },
  ];
}

/**
 * Idempotent script (pure): table, sets (elements kept), chains, and a rewrite (flush + add) of the
 * chains weft owns; the admin chain is created if absent and never flushed (its rules are the admin's).
 */
export function formatRulesetScript(network: string, adminChain: string): string {
  const n = fwNetworkNames(network);
  const head = new NftBatch(WEFT_TABLE)
    .ensureTable()
    .ensureSet(S.isolated, { type: 'ifname', comment: 'firewall same-bridge isolated bridges' })
    .ensureSet(S.same, { type: ['ifname', 'ifname'], comment: 'firewall same-bridge pairs' })
    .ensureSet(S.selfDrop, { type: ['ifname', 'ifname'], comment: 'firewall isolated bridge pairs' })
    .ensureSet(n.pods4, { type: 'ipv4_addr', comment: `firewall pods v4` })
    .ensureSet(n.pods6, { type: 'ipv6_addr', comment: `firewall pods v6` })
    .ensureChain(S.isolation, { type: 'filter', hook: 'forward', priority: MARK_PRIORITY, policy: 'accept' })
    .ensureChain(S.unmark, { type: 'filter', hook: 'forward', priority: UNMARK_PRIORITY, policy: 'accept' })
    .ensureChain(n.chain, { type: 'filter', hook: 'forward', priority: MARK_PRIORITY, policy: 'accept' });
  for (const c of [S.isolation, S.unmark, n.chain]) head.flushChain(c);
  const t = `${WEFT_TABLE.family} ${WEFT_TABLE.name}`;
  // The admin chain keeps the reference's (upper-case) name, which nftExpr's name check refuses; the
  // config parser allowed only [A-Za-z][A-Za-z0-9_-]*, so the name is one safe token.
  const admin = [`add chain ${t} ${adminChain}`, `add rule ${t} ${n.chain} jump ${adminChain} comment "${adminJumpComment(adminChain)}"`];
  const tail = new NftBatch(WEFT_TABLE);
  for (const r of firewallRules(network)) tail.appendRule(r.chain, r.expr);
  return head.render() + `${admin.join('\n')}\n` + tail.render();
}

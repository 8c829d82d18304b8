// Other tables' forward chains: which ones weft hooks (an accept of FW_MARK at their top), listed
// in-process over netlink. In nftables an accept ends only its own base chain: a drop policy in
// iptables-nft's `ip filter FORWARD` or in a native `inet filter forward` still drops what weft's chain
// accepted, so each such chain gets one constant rule, as the reference inserts its jump into FORWARD.
import type { NfnlBaseChain } from '../../lib/netfilter/nfnl/chains.ts';
import { listBaseChains, listRuleComments } from '../../lib/netfilter/nfnl/chains.ts';
import type { NfnlSocket } from '../../lib/netfilter/nfnl/socket.ts';
import { WEFT_TABLE } from '../../lib/netfilter/table.ts';
import { FW_MARK, HOOK_COMMENT, MARK_PRIORITY, UNMARK_PRIORITY } from './names.ts';

/** A forward base chain of another table, and whether it already holds weft's accept rule. */
export interface ForwardChain {
  family: 'ip' | 'ip6' | 'inet';
  table: string;
  chain: string;
  prio: number;
  policy: string;
  hooked: boolean;
}

// Names written into the script unquoted: what iptables-nft, firewalld and hand-written tables use.
const PLAIN = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

/**
 * The filter chains at the forward hook of ip/ip6/inet tables other than weft's whose priority lies
 * strictly between weft's marking and unmarking chains (only those see the mark). Pure.
 */
export function selectForwardChains(chains: readonly NfnlBaseChain[]): Omit<ForwardChain, 'hooked'>[] {
  const out: Omit<ForwardChain, 'hooked'>[] = [];
  for (const c of chains) {
    if (c.hook !== 'forward' || c.type !== 'filter' || c.family === 'bridge') continue;
    if (c.family === WEFT_TABLE.family && c.table === WEFT_TABLE.name) continue;
    if (c.priority <= MARK_PRIORITY || c.priority >= UNMARK_PRIORITY) continue;
    if (!PLAIN.test(c.table) || !PLAIN.test(c.name)) continue;
    out.push({ family: c.family, table: c.table, chain: c.name, prio: c.priority, policy: c.policy });
  }
  return out;
}

/** The forward chains of the socket's netns with their hook status: one chain dump plus one rule dump per candidate. */
export function listForwardChains(sock: NfnlSocket): ForwardChain[] {
  return selectForwardChains(listBaseChains(sock)).map((c) => ({
    ...c,
    hooked: listRuleComments(sock, c.family, c.table, c.chain).some((r) => r.comment === HOOK_COMMENT),
  }));
}

/** The accept rule's body: iptables-nft shows it as `-m mark --mark 0x100000/0x100000 -m comment --comment weft-firewall -j ACCEPT`. */
export function hookRuleBody(): string {
  const m = `0x${FW_MARK.toString(16).padStart(8, '0')}`;
  return `meta mark & ${m} == ${m} counter accept comment "${HOOK_COMMENT}"`;
}

/** Script lines inserting the accept rule at the top of each chain not hooked yet. Pure. */
export function formatHookLines(chains: readonly ForwardChain[]): string[] {
  return chains.filter((c) => !c.hooked).map((c) => `insert rule ${c.family} ${c.table} ${c.chain} ${hookRuleBody()}`);
}

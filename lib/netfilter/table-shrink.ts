// The removal-only part of a whole-table diff (table-diff.ts): when `want` is `held` minus some
// chains, sets, named counters and rules (a policy deleted), plus element changes of the sets that
// stay, the change can go to the kernel as one nf_tables netlink batch from this process instead of
// an `nft -f` run that flushes and re-adds every chain that lost a rule. Pure, except commitShrink.
import { NftError } from './errors.ts';
import { listRuleComments } from './nfnl/chains.ts';
import { delChainCommand, delCounterCommand, delRuleCommand, delSetCommand } from './nfnl/deletes.ts';
import { elemChangeCommands, type NfnlElemChange } from './nfnl/elem-changes.ts';
import type { NfnlSocket } from './nfnl/socket.ts';
import type { TableContent } from './table-diff.ts';
import { deltaElem, sameBaseChain, setElementDeltas, type SetElementDelta } from './table-elem-diff.ts';
import type { NftTableRef } from './types.ts';

/** What a removal-only change removes (and which elements of the remaining sets change). */
export interface ShrinkDelta {
  readonly elements: readonly SetElementDelta[];
  /** Chains that stay but lose rules: the tags held and the tags kept (a subsequence of held). */
  readonly rules: readonly { chain: string; held: readonly string[]; keep: readonly string[] }[];
  readonly chains: readonly string[];
  readonly sets: readonly string[];
  readonly counters: readonly string[];
}

/** The removals turning `held` into `want`, or null when `want` adds a set, chain, counter or rule, changes a base chain or an interval set's elements, or nothing is removed. */
export function shrinkOnlyDelta(held: TableContent, want: TableContent): ShrinkDelta | null {
  const rules: { chain: string; held: string[]; keep: string[] }[] = [];
  for (const [name, c] of want.chains) {
    const h = held.chains.get(name);
    if (h === undefined || !sameBaseChain(h, c)) return null;
    const ht = h.rules.map((r) => r.tag);
    const keep = c.rules.map((r) => r.tag);
    if (!isSubsequence(keep, ht)) return null;
    if (keep.length < ht.length) rules.push({ chain: name, held: ht, keep });
  }
  for (const n of want.counters ?? []) if (held.counters?.has(n) !== true) return null;
  const elements = setElementDeltas(held, want);
  if (elements === null) return null;
  const chains = [...held.chains.keys()].filter((n) => !want.chains.has(n));
  const sets = [...held.sets.keys()].filter((n) => !want.sets.has(n));
  const counters = [...(held.counters ?? [])].filter((n) => want.counters?.has(n) !== true);
  if (rules.length + chains.length + sets.length + counters.length === 0) return null;
  return { elements, rules, chains, sets, counters };
}

/** Commits a removal-only delta over `sock` (in its netns) as one transaction. Throws NftError('failed') when the kernel's rules are not the ones held. */
export function commitShrink(sock: NfnlSocket, table: NftTableRef, d: ShrinkDelta): void {
  const changes: NfnlElemChange[] = [];
  for (const e of d.elements) for (const k of e.del) changes.push({ verb: 'delete', set: e.set, elem: deltaElem(e, k, false) });
  for (const e of d.elements) for (const k of e.add) changes.push({ verb: 'add', set: e.set, elem: deltaElem(e, k, true) });
  const cmds = elemChangeCommands(table, changes);
  for (const r of d.rules) {
    // Handles are the kernel's: read them now, and only trust them when the comments are the tags held.
    const listed = listRuleComments(sock, table.family, table.name, r.chain);
    if (listed.length !== r.held.length || listed.some((x, i) => x.comment !== r.held[i])) {
      throw new NftError('failed', `nftables: chain ${r.chain} of ${table.family} ${table.name} is not as last applied`);
    }
    let j = 0;
    for (const x of listed) {
      if (j < r.keep.length && x.comment === r.keep[j]) j++;
      else cmds.push(delRuleCommand(table, r.chain, x.handle));
    }
  }
  for (const c of d.chains) cmds.push(delChainCommand(table, c));
  for (const c of d.counters) cmds.push(delCounterCommand(table, c));
  for (const s of d.sets) cmds.push(delSetCommand(table, s));
  sock.commit(`nf_tables removals in ${table.family} ${table.name}`, cmds);
}

/** True when `sub` is `all` with some entries left out, order kept (greedy: equal tags are interchangeable). */
function isSubsequence(sub: readonly string[], all: readonly string[]): boolean {
  let j = 0;
  for (const t of all) if (j < sub.length && t === sub[j]) j++;
  return j === sub.length;
}

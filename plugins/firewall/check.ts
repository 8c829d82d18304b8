// CHECK: weft's chains are in place, every forward chain of other tables is hooked, and the
// attachment's addresses (and bridge) are in the sets with this attachment's comment.
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { listTable } from '../../lib/netfilter/list.ts';
import { listSetElems } from '../../lib/netfilter/nfnl/set-elements.ts';
import { keptNfnlSocket, type NfnlSocket } from '../../lib/netfilter/nfnl/socket.ts';
import { WEFT_TABLE } from '../../lib/netfilter/table.ts';
import type { NftTableState } from '../../lib/netfilter/types.ts';
import { attachmentOf, requirePrevResult } from './add.ts';
import { parseFirewallConfig } from './config.ts';
import { bridgeKeys, podKey, type FwAttachment } from './elements.ts';
import { checkFailed } from './errors.ts';
import { listForwardChains, type ForwardChain } from './hooks.ts';
import { FW_SHARED as S, adminJumpComment, elementComment, fwNetworkNames } from './names.ts';
import { firewallRules } from './ruleset.ts';

/** What is wrong with the listed chains and hooks; empty when healthy. Pure. */
export function findRuleProblems(state: NftTableState | null, network: string, adminChain: string, forward: readonly ForwardChain[]): string[] {
  if (state === null) return ['table inet weft is missing'];
  const problems: string[] = [];
  const want = new Map<string, number>();
  for (const r of firewallRules(network)) want.set(r.chain, (want.get(r.chain) ?? 0) + 1);
  const n = fwNetworkNames(network);
  want.set(n.chain, (want.get(n.chain) ?? 0) + 1); // the admin jump
  for (const [chain, count] of want) {
    const have = state.chains.get(chain)?.rules.length;
    if (have === undefined) problems.push(`chain ${chain} is missing`);
    else if (have < count) problems.push(`chain ${chain} has ${have} of its ${count} rules`);
  }
  if (!state.chains.has(adminChain)) problems.push(`admin chain ${adminChain} is missing`);
  const jump = adminJumpComment(adminChain);
  if (!(state.chains.get(n.chain)?.rules ?? []).some((r) => r.comment === jump)) problems.push(`chain ${n.chain} does not jump to ${adminChain}`);
  for (const c of forward) if (!c.hooked) problems.push(`forward chain ${c.family} ${c.table} ${c.chain} (policy ${c.policy}) lacks the weft-firewall accept rule`);
  return problems;
}

function has(sock: NfnlSocket, set: string, key: Uint8Array, comment?: string): 'yes' | 'no' | 'other' {
  const e = (listSetElems(sock, WEFT_TABLE, set) ?? []).find((x) => Buffer.compare(Buffer.from(x.key), Buffer.from(key)) === 0);
  if (e === undefined) return 'no';
  return comment === undefined || e.comment === comment ? 'yes' : 'other';
}

/** What is missing of the attachment's elements, read over netlink in the calling thread's netns. */
export function findElementProblems(sock: NfnlSocket, att: FwAttachment): string[] {
  const problems: string[] = [];
  const comment = elementComment(att.containerId, att.ifName);
  for (const ip of att.podIps) {
    const { set, key } = podKey(att.network, ip);
    const found = has(sock, set, key, comment);
    if (found === 'no') problems.push(`${ip} is missing from ${set}`);
    else if (found === 'other') problems.push(`${ip} in ${set} belongs to another attachment`);
  }
  if (att.bridge !== undefined) {
    const k = bridgeKeys(att.bridge);
    if (has(sock, S.isolated, k.isolated) !== 'yes' || has(sock, att.isolated === true ? S.selfDrop : S.same, k.same) !== 'yes') problems.push(`bridge ${att.bridge} is missing from the isolation sets`);
  }
  return problems;
}

/** CHECK, in the node netns: code 130 naming everything missing. */
export function cmdCheck(a: CmdArgs): void {
  const cfg = parseFirewallConfig(a);
  const att = attachmentOf(cfg, a, requirePrevResult(a));
  if (att.podIps.length === 0 && att.bridge === undefined) return;
  const sock = keptNfnlSocket();
  const problems = [
    ...findRuleProblems(listTable(WEFT_TABLE, { terse: true }), cfg.name, cfg.adminChain, listForwardChains(sock)),
    ...findElementProblems(sock, att),
  ];
  if (problems.length > 0) throw checkFailed('firewall: CHECK failed', problems.join('; '));
}

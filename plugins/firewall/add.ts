// ADD: named steps. The kernel changes are the (idempotent, constant) rule set on a network's first
// ADD and one element transaction; a refused ADD leaves no element behind.
import { invalidConfig } from '../../lib/cni/errors.ts';
import { Rollback } from '../../lib/cni/rollback.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import type { Result } from '../../lib/cni/types.ts';
import { NftError } from '../../lib/netfilter/errors.ts';
import { listRuleComments } from '../../lib/netfilter/nfnl/chains.ts';
import { keptNfnlSocket } from '../../lib/netfilter/nfnl/socket.ts';
import { WEFT_TABLE } from '../../lib/netfilter/table.ts';
import { runNft } from '../../lib/netfilter/run.ts';
import { parseFirewallConfig, type FirewallConfig } from './config.ts';
import { addAttachmentElems, removeAttachmentElems, resultIps, type FwAttachment } from './elements.ts';
import { noBridge } from './errors.ts';
import { formatHookLines, listForwardChains } from './hooks.ts';
import { adminJumpComment, fwNetworkNames } from './names.ts';
import { formatRulesetScript } from './ruleset.ts';

/** The chained plugin's input: firewall only ever runs after an interface plugin (reference: "missing prevResult"). */
export function requirePrevResult(a: CmdArgs): Result {
  if (a.prevResult === undefined) throw invalidConfig('firewall must be called as a chained plugin', 'prevResult is missing');
  return a.prevResult;
}

// dev_valid_name (net/core/dev.c): 1..15 bytes, no '/', ':' or whitespace.
const IFNAME_RE = /^(?!\.\.?$)[^/:\s]{1,15}$/;

/** The attachment ADD and CHECK work on; same-bridge and isolated take the bridge from prevResult's first interface, as the reference. */
export function attachmentOf(cfg: FirewallConfig, a: Pick<CmdArgs, 'containerId' | 'ifName'>, prev: Result): FwAttachment {
  const att: FwAttachment = { network: cfg.name, containerId: a.containerId, ifName: a.ifName, podIps: resultIps(prev) };
  if (cfg.ingressPolicy === 'open') return att;
  const bridge = prev.interfaces?.[0]?.name ?? '';
  if (bridge === '') throw noBridge(`firewall: ingressPolicy ${cfg.ingressPolicy} needs a bridge`, 'prevResult has no interfaces; chain firewall after bridge');
  if (!IFNAME_RE.test(bridge) || Buffer.byteLength(bridge) > 15) throw noBridge('firewall: prevResult names an invalid bridge interface', `name ${JSON.stringify(bridge)}`);
  return { ...att, bridge, isolated: cfg.ingressPolicy === 'isolated' };
}

/** ADD, in the node netns: the pod's addresses (and bridge) into weft's sets; returns prevResult unchanged. */
export function cmdAdd(a: CmdArgs): Result {
  const cfg = parseFirewallConfig(a);
  const prev = requirePrevResult(a);
  const att = attachmentOf(cfg, a, prev);
  if (att.podIps.length === 0 && att.bridge === undefined) return prev; // nothing to let through: touch nothing
  ensureAttachment(att, cfg.adminChain);
  return prev;
}

/**
 * Idempotent, in the calling thread's netns. Steady state is in-process: one element transaction and
 * netlink listings of the network's chain and of the forward chains. `nft -f -` runs only when the
 * network's sets are missing (its first ADD on this node), its chain jumps to another admin chain
 * than configured, or a forward chain lacks weft's accept rule (e.g. iptables-nft created `filter
 * FORWARD` since), so a drop policy set up after the first pod is still handled.
 */
export function ensureAttachment(att: FwAttachment, adminChain: string): void {
  const sock = keptNfnlSocket();
  // The elements are the only per-pod change to undo (rules and hooks are shared and constant).
  new Rollback().runSync((rb) => {
    let added = true;
    try {
      addAttachmentElems(sock, att);
      rb.push('firewall elements', () => removeAttachmentElems(sock, att));
    } catch (e) {
      if (e instanceof NftError) throw e; // a refused value: the full path would refuse it too
      added = false;
    }
    // The network's chain is rewritten when its sets were missing or it jumps to another admin chain.
    const rewrite = !added || !listRuleComments(sock, WEFT_TABLE.family, WEFT_TABLE.name, fwNetworkNames(att.network).chain).some((r) => r.comment === adminJumpComment(adminChain));
    const hooks = formatHookLines(listForwardChains(sock));
    if (!rewrite && hooks.length === 0) return;
    runNft(['-f', '-'], (rewrite ? formatRulesetScript(att.network, adminChain) : '') + hooks.map((l) => `${l}\n`).join(''));
    if (!added) addAttachmentElems(sock, att); // the last step: nothing after it to fail
  });
}

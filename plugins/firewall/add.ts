// ADD: named steps. The kernel changes are the (idempotent, constant) rule set on a network's first
// ADD and one element transaction; a refused ADD leaves no element behind.
import { invalidConfig } from '../../lib/cni/errors.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import type { Result } from '../../lib/cni/types.ts';
import { NftError } from '../../lib/netfilter/errors.ts';
import { keptNfnlSocket } from '../../lib/netfilter/nfnl/socket.ts';
import { runNft } from '../../lib/netfilter/run.ts';
import { parseFirewallConfig, type FirewallConfig } from './config.ts';
import { addAttachmentElems, removeAttachmentElems, resultIps, type FwAttachment } from './elements.ts';
import { noBridge } from './errors.ts';
import { formatHookLines, listForwardChains } from './hooks.ts';
import { formatRulesetScript } from './ruleset.ts';

/** The chained plugin's input: firewall only ever runs after an interface plugin (reference: "missing prevResult"). */
export function requirePrevResult(a: CmdArgs): Result {
  if (a.prevResult === undefined) throw invalidConfig('firewall must be called as a chained plugin', 'prevResult is missing');
  return a.prevResult;
}

// dev_valid_name (net/core/dev.c): 1..15 bytes, no '/', ':' or whitespace.
const IFNAME_RE = /^(?!\.\.?$)[^/:\s]{1,15}$/;

/** The attachment ADD and CHECK work on; same-bridge takes the bridge from prevResult's first interface, as the reference. */
export function attachmentOf(cfg: FirewallConfig, a: Pick<CmdArgs, 'containerId' | 'ifName'>, prev: Result): FwAttachment {
  const att: FwAttachment = { network: cfg.name, containerId: a.containerId, ifName: a.ifName, podIps: resultIps(prev) };
  if (cfg.ingressPolicy !== 'same-bridge') return att;
  const bridge = prev.interfaces?.[0]?.name ?? '';
  if (bridge === '') throw noBridge('firewall: ingressPolicy same-bridge needs a bridge', 'prevResult has no interfaces; chain firewall after bridge');
  if (!IFNAME_RE.test(bridge) || Buffer.byteLength(bridge) > 15) throw noBridge('firewall: prevResult names an invalid bridge interface', `name ${JSON.stringify(bridge)}`);
  return { ...att, bridge };
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
 * Idempotent, in the calling thread's netns. Steady state is in-process: one element transaction and a
 * netlink listing of forward chains. `nft -f -` runs only when the network's sets are missing (its
 * first ADD on this node) or a forward chain lacks weft's accept rule (e.g. iptables-nft created
 * `filter FORWARD` since), so a drop policy set up after the first pod is still handled.
 */
export function ensureAttachment(att: FwAttachment, adminChain: string): void {
  const sock = keptNfnlSocket();
  let ready = true;
  try {
    addAttachmentElems(sock, att);
  } catch (e) {
    if (e instanceof NftError) throw e; // a refused value: the full path would refuse it too
    ready = false;
  }
  try {
    const hooks = formatHookLines(listForwardChains(sock));
    if (ready && hooks.length === 0) return;
    runNft(['-f', '-'], (ready ? '' : formatRulesetScript(att.network, adminChain)) + hooks.map((l) => `${l}\n`).join(''));
    if (!ready) addAttachmentElems(sock, att);
  } catch (e) {
    // One rollback: the elements are the only per-pod change (rules and hooks are shared and constant).
    if (ready) removeAttachmentElems(sock, att);
    throw e;
  }
}

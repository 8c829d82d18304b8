// Names the firewall plugin owns in `inet weft`: shared chains and sets, per-network chain and pod
// sets, the packet mark bit that carries "pod traffic" to other tables' forward chains, element comments.
import { stableId } from '../../lib/hash/fnv.ts';

/** The packet mark bit set on pod traffic before any other forward chain runs, cleared after (docs/firewall.md). */
export const FW_MARK = 0x00100000;
/** Priority of weft's marking chains: after conntrack (-200), before mangle (-150) and filter (0). */
export const MARK_PRIORITY = -160;
/** Priority of the chain that clears the bit again, after filter (0), security (50) and firewalld (+10). */
export const UNMARK_PRIORITY = 300;
/** Comment of the accept rule weft inserts at the top of other tables' forward chains. */
export const HOOK_COMMENT = 'weft-firewall';

/** Chains and sets shared by every network. */
export const FW_SHARED = {
  /** forward base chain (MARK_PRIORITY): drops traffic between two different isolated bridges. */
  isolation: 'fw-isolation',
  /** forward base chain (UNMARK_PRIORITY): clears FW_MARK. */
  unmark: 'fw-unmark',
  /** `type ifname`: bridges of networks with ingressPolicy same-bridge or isolated. */
  isolated: 'fw-isolated',
  /** `type ifname . ifname`: `<bridge> . <bridge>` for each same-bridge bridge (traffic within it stays allowed). */
  same: 'fw-same',
  /** `type ifname . ifname`: `<bridge> . <bridge>` for each `isolated` bridge (traffic within it is dropped). */
  selfDrop: 'fw-self-drop',
} as const;

/** One network's names: its base chain and pod address sets. */
export interface FwNetworkNames {
  chain: string;
  pods4: string;
  pods6: string;
}

/** Names for network `network` (a hash: network names allow characters nft names do not). */
export function fwNetworkNames(network: string): FwNetworkNames {
  const id = stableId(`firewall:${network}`, 12);
  return { chain: `fw-fwd-${id}`, pods4: `fw-pods4-${id}`, pods6: `fw-pods6-${id}` };
}

/** The comment of a network chain's jump to its admin chain: tells ADD whether the configured admin chain is the one in place. */
export function adminJumpComment(adminChain: string): string {
  return `fw-admin:${adminChain}`;
}

const COMMENT_OK = /^[A-Za-z0-9_.:/@=+,-]{1,128}$/;

/** The element comment of an attachment: `<containerID>/<ifname>`, hashed when nft would refuse it. */
export function elementComment(containerId: string, ifName: string): string {
  const text = `${containerId}/${ifName}`;
  return COMMENT_OK.test(text) ? text : `h:${stableId(text, 16)}`;
}

// One attachment's elements, over nf_tables netlink in-process (no nft process): pod addresses in the
// network's sets, commented `<containerID>/<ifname>`, and the bridge in the isolation sets.
import type { Result } from '../../lib/cni/types.ts';
import { formatIp, normalizeIp } from '../../lib/ip/addr.ts';
import { parseCidr } from '../../lib/ip/cidr.ts';
import { formatKeyBytes } from '../../lib/netfilter/nfnl/key-codec.ts';
import { NfnlElemBatch, listSetElems } from '../../lib/netfilter/nfnl/set-elements.ts';
import type { NfnlSocket } from '../../lib/netfilter/nfnl/socket.ts';
import type { NfnlElem, NfnlListedElem } from '../../lib/netfilter/nfnl/elem.ts';
import { WEFT_TABLE } from '../../lib/netfilter/table.ts';
import { FW_SHARED as S, elementComment, fwNetworkNames } from './names.ts';

/** What one attachment owns: its network, identity, pod addresses and (same-bridge) its bridge. */
export interface FwAttachment {
  network: string;
  containerId: string;
  ifName: string;
  /** Bare addresses in canonical text form. */
  podIps: readonly string[];
  /** Set only with ingressPolicy same-bridge or isolated. */
  bridge?: string;
  /** With `bridge`: isolated also drops traffic within the bridge. */
  isolated?: boolean;
}

/** Every address of a result (the reference accepts traffic of all of prevResult's ips), canonical, deduplicated. Pure. */
export function resultIps(prev: Result | undefined): string[] {
  const out = new Set<string>();
  for (const ip of prev?.ips ?? []) {
    const c = parseCidr(ip.address);
    if (c !== null) out.add(formatIp(normalizeIp(c.addr)));
  }
  return [...out];
}

function isV6(ip: string): boolean {
  return ip.includes(':');
}

/** The set an address belongs in and its key bytes. */
export function podKey(network: string, ip: string): { set: string; key: Uint8Array } {
  const n = fwNetworkNames(network);
  return isV6(ip) ? { set: n.pods6, key: formatKeyBytes('ipv6_addr', ip) } : { set: n.pods4, key: formatKeyBytes('ipv4_addr', ip) };
}

/** The isolation elements of a bridge: its name, and the pair `<bridge> . <bridge>`. */
export function bridgeKeys(bridge: string): { isolated: Uint8Array; same: Uint8Array } {
  return { isolated: formatKeyBytes('ifname', bridge), same: formatKeyBytes(['ifname', 'ifname'], [bridge, bridge]) };
}

/**
 * Idempotent, in the socket's netns: (re)writes the attachment's elements in ONE transaction (a stale
 * element of the same address is replaced, so the comment names the current owner). Throws when a
 * set is missing (ENOENT): the caller sets the rule set up and retries.
 */
export function addAttachmentElems(sock: NfnlSocket, att: FwAttachment): void {
  const b = new NfnlElemBatch(WEFT_TABLE);
  const comment = elementComment(att.containerId, att.ifName);
  for (const ip of att.podIps) {
    const { set, key } = podKey(att.network, ip);
    b.delete(set, [{ key }]);
    b.add(set, [{ key, comment }]);
  }
  if (att.bridge !== undefined) {
    const k = bridgeKeys(att.bridge);
    b.add(S.isolated, [{ key: k.isolated }]);
    b.add(att.isolated === true ? S.selfDrop : S.same, [{ key: k.same }]);
  }
  b.commit(sock);
}

/** Forgiving: removes the attachment's address elements (ADD's rollback; the isolation elements are shared). */
export function removeAttachmentElems(sock: NfnlSocket, att: FwAttachment): void {
  const b = new NfnlElemBatch(WEFT_TABLE);
  for (const ip of att.podIps) {
    const { set, key } = podKey(att.network, ip);
    b.delete(set, [{ key }]);
  }
  if (b.size > 0) b.commit(sock);
}

/** The network's pod elements, per set; empty lists when the sets are absent. */
export function listPodElems(sock: NfnlSocket, network: string): { set: string; elems: NfnlListedElem[] }[] {
  const n = fwNetworkNames(network);
  return [n.pods4, n.pods6].map((set) => ({ set, elems: listSetElems(sock, WEFT_TABLE, set) ?? [] }));
}

/**
 * Forgiving, in the socket's netns: removes the listed elements in one transaction. Absent
 * elements, sets or table are not errors.
 */
export function deleteElems(sock: NfnlSocket, listed: readonly { set: string; elems: readonly NfnlElem[] }[]): void {
  const b = new NfnlElemBatch(WEFT_TABLE);
  for (const l of listed) b.delete(l.set, l.elems.map((e) => ({ key: e.key })));
  if (b.size > 0) b.commit(sock);
}

/** The listed elements whose comment satisfies `pick`, per set (uncommented elements are never picked). Pure. */
export function selectElems(listed: readonly { set: string; elems: readonly NfnlListedElem[] }[], pick: (comment: string) => boolean): { set: string; elems: NfnlListedElem[] }[] {
  return listed.map((l) => ({ set: l.set, elems: l.elems.filter((e) => e.comment !== undefined && pick(e.comment)) }));
}

// nftables object names of portmap inside weft's `inet weft` table, and the element comment of one attachment.
import { fnv1a32 } from '../../lib/hash/fnv.ts';

/**
 * Chains, maps and sets portmap owns in `inet weft` (prefix `portmap-`; no other concern touches them).
 * Every name is shared by all pods: a pod only ever adds elements, so the rule count is constant.
 */
export const PORTMAP_NAMES = {
  /** nat prerouting (dstnat): traffic from other hosts and from pods (hairpin). */
  preChain: 'portmap-pre',
  /** nat output (-100, as dstnat): connections the node itself opens, incl. to 127.0.0.1. */
  outChain: 'portmap-out',
  /** Regular chain with the four DNAT map lookups, jumped to for local destinations only. */
  dnatChain: 'portmap-dnat',
  /** nat postrouting (srcnat): masquerade of hairpin, localhost and masqAll flows. */
  postChain: 'portmap-post',
  /** proto . hostPort : podIP . containerPort (hostPort on every local address). */
  dnat4: 'portmap-dnat4',
  dnat6: 'portmap-dnat6',
  /** hostIP . proto . hostPort : podIP . containerPort (hostPort on one address; looked up first). */
  hostDnat4: 'portmap-hostip4',
  hostDnat6: 'portmap-hostip6',
  /** saddr (pod subnet or 127.0.0.1) . podIP . proto . containerPort of DNATed flows to masquerade (hairpin, localhost). */
  snat4: 'portmap-snat4',
  snat6: 'portmap-snat6',
  /** podIP . proto . containerPort of mappings whose every DNATed flow is masqueraded (masqAll). */
  masq4: 'portmap-masq4',
  masq6: 'portmap-masq6',
} as const;

/** The sets and maps holding per-pod elements, in a fixed order (DEL and CHECK walk them). */
export const ELEMENT_SETS = [
  PORTMAP_NAMES.dnat4,
  PORTMAP_NAMES.dnat6,
  PORTMAP_NAMES.hostDnat4,
  PORTMAP_NAMES.hostDnat6,
  PORTMAP_NAMES.snat4,
  PORTMAP_NAMES.snat6,
  PORTMAP_NAMES.masq4,
  PORTMAP_NAMES.masq6,
] as const;

/** True for the DNAT maps (elements carry data), false for the masquerade sets. */
export function isDnatMap(name: string): boolean {
  return name === PORTMAP_NAMES.dnat4 || name === PORTMAP_NAMES.dnat6 || name === PORTMAP_NAMES.hostDnat4 || name === PORTMAP_NAMES.hostDnat6;
}

const COMMENT_OK = /^[A-Za-z0-9_.:/@=+,-]{1,128}$/;

/**
 * The element comment naming the owner: `<network hash>:<containerID>/<ifname>`. DEL finds an
 * attachment's elements by it without prevResult; the network hash (FNV-1a of the network name, since
 * the maps are node-wide) lets GC touch only its own network's elements. The part after the hash is
 * itself hashed when nft would refuse it (over 128 characters or outside its comment charset).
 */
export function elementComment(network: string, containerId: string, ifName: string): string {
  const prefix = networkTag(network);
  const text = `${prefix}${containerId}/${ifName}`;
  return COMMENT_OK.test(text) ? text : `${prefix}h:${fnv1a32(`${containerId}/${ifName}`)}`;
}

/** The comment prefix of every element of network `network` (`<8 hex>:`). */
export function networkTag(network: string): string {
  return `${fnv1a32(network)}:`;
}

// Names the bridge plugin derives: the host veth name, the link alias that finds it again, and the
// nftables object names and element comment of one network/attachment.

import { fnv1a32 } from '../../lib/hash/fnv.ts';

/** `w` + 6 hex of the network name's hash: every host veth of network `network` starts with this. */
export function vethNetworkPrefix(network: string): string {
  return `w${fnv1a32(network).slice(0, 6)}`;
}

/** 8 hex of the hash of `<containerID>/<ifname>`: the attachment part of a host veth name. */
export function vethAttachmentPart(containerId: string, ifName: string): string {
  return fnv1a32(`${containerId}/${ifName}`);
}

/**
 * The host veth's name: vethNetworkPrefix + vethAttachmentPart, 15 bytes (IFNAMSIZ 16 minus the NUL,
 * include/uapi/linux/if.h). The name is set by the creating RTM_NEWLINK itself, so from the moment the
 * pair exists GC and DEL can tell its network and attachment; the alias needs a second message, and
 * an ADD killed between the two left a veth nobody could attribute.
 */
export function hostVethName(network: string, containerId: string, ifName: string): string {
  return vethNetworkPrefix(network) + vethAttachmentPart(containerId, ifName);
}

/** Whether `name` has the shape of a hostVethName (of any network). */
export function isHostVethName(name: string): boolean {
  return /^w[0-9a-f]{14}$/.test(name);
}

/**
 * The host veth's alias (IFLA_IFALIAS): `weft:<containerID>/<ifname>`, so a DEL without CNI_NETNS and
 * without prevResult still finds the pair. Long IDs are hashed to stay under IFALIASZ (256 bytes).
 */
export function attachmentAlias(containerId: string, ifName: string): string {
  const text = `weft:${containerId}/${ifName}`;
  return text.length <= 200 ? text : `weft:h${fnv1a32(`${containerId}/${ifName}`)}`;
}

/** nftables names of one network's masquerade: its own base chain and per-family address sets. */
export interface MasqNames {
  chain: string;
  pods4: string;
  pods6: string;
  nets4: string;
  nets6: string;
  /** weftMasqExempt's networks (interval sets), e.g. the whole flannel Network. */
  exempt4: string;
  exempt6: string;
}

/** Names for network `network`: a hash of the name, since network names allow upper case and dots nft names do not. */
export function masqNames(network: string): MasqNames {
  const id = fnv1a32(network);
  return {
    chain: `bridge-masq-${id}`, pods4: `bridge-pods4-${id}`, pods6: `bridge-pods6-${id}`, nets4: `bridge-nets4-${id}`, nets6: `bridge-nets6-${id}`,
    exempt4: `bridge-exempt4-${id}`, exempt6: `bridge-exempt6-${id}`,
  };
}

const COMMENT_OK = /^[A-Za-z0-9_.:/@=+,-]{1,128}$/;

/** The set element comment of an attachment: `<containerID>/<ifname>`, hashed when nft would refuse it (over 128 chars, odd characters). */
export function elementComment(containerId: string, ifName: string): string {
  const text = `${containerId}/${ifName}`;
  return COMMENT_OK.test(text) ? text : `h:${fnv1a32(text)}`;
}

/** nftables names of one network's macspoofchk in weft's bridge table: its base chain and two sets. */
export interface MacSpoofNames {
  chain: string;
  /** `type ifname`: the host veths whose frames are checked. */
  ports: string;
  /** `type ifname . ether_addr`: the source MAC each of those ports may send from. */
  pairs: string;
}

/** macspoofchk names for network `network` (hashed like masqNames). */
export function macSpoofNames(network: string): MacSpoofNames {
  const id = fnv1a32(network);
  return { chain: `bridge-macspoof-${id}`, ports: `bridge-msports-${id}`, pairs: `bridge-mspairs-${id}` };
}

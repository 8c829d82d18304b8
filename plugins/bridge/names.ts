// nftables names the bridge plugin derives for one network, and the element comment of one
// attachment. The host veth's name and alias are a contract with weft doctor: lib/attach/bridge-veth.ts.

import { fnv1a32 } from '../../lib/hash/fnv.ts';

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

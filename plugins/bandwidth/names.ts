// Names the bandwidth plugin derives: the ifb device of an attachment (the reference's name, so a
// DEL finds what either implementation created) and the MAC that tags weft's ifbs per network.
import { sha512Hex } from '../../lib/hash/sha512.ts';
/** Every ifb the reference and weft create starts with this. */
export const IFB_PREFIX = 'bwp';

/** `bwp` + the first 12 hex digits of sha512(network + containerID): 15 bytes, the reference's ifb name. */
export function ifbName(network: string, containerId: string): string {
  return (IFB_PREFIX + sha512Hex(network + containerId)).slice(0, 15);
}

/** Whether `name` has the shape of an ifbName (of any network). */
export function isIfbName(name: string): boolean {
  return /^bwp[0-9a-f]{12}$/.test(name);
}

/**
 * The MAC weft gives the ifbs of `network`: 0e (locally administered, unicast), 77 ('w'), then 4
 * bytes of sha512(network). The creating RTM_NEWLINK carries it, so from the moment an ifb exists
 * GC can tell it is weft's and which network's (ifb never sends frames: the address is only a tag).
 */
export function ifbMac(network: string): string {
  const h = sha512Hex(network);
  return `0e:77:${h.slice(0, 2)}:${h.slice(2, 4)}:${h.slice(4, 6)}:${h.slice(6, 8)}`;
}

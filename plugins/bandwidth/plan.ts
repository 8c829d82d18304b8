// What one direction's shaping puts on a device, as data: a tbf when every packet is shaped, or
// the reference's htb design when subnets pick what is shaped (an uncapped class 1:1, a capped
// class 1:30, u32 filters steering the listed subnets). Pure; tc-steps.ts applies it.
import type { Cidr } from '../../lib/ip/cidr.ts';
import { maskValue } from '../../lib/ip/cidr.ts';
import type { U32Key } from '../../lib/netlink/tc-filter.ts';
import { ETH_P_IP, ETH_P_IPV6, tcHandle } from '../../lib/netlink/tc-msg.ts';
import type { BucketParams } from './shaping.ts';

/** The root qdisc's handle `1:` (the reference's). */
export const ROOT_HANDLE = tcHandle(1, 0);
/** Minor of the capped class (0x30, the reference's ShapedClassMinorID 48). */
export const SHAPED_MINOR = 0x30;
/** Minor of the uncapped class (the reference's UnShapedClassMinorID 1). */
export const UNSHAPED_MINOR = 1;
/** Rate of the uncapped class in bytes/s (the reference's UncappedRate: 100 GB/s). */
export const UNCAPPED_RATE = 100_000_000_000n;
/** tc's default rate-to-quantum divisor, which the reference sets. */
export const HTB_R2Q = 10;

/** One u32 filter of the htb design. */
export interface SubnetFilter {
  prio: number;
  protocol: number;
  keys: U32Key[];
  /** Class minor the match selects. */
  minor: number;
}

/** A device's shaping: tbf, or htb with its two classes and filters. */
export type ShapingPlan =
  | { kind: 'tbf'; bucket: BucketParams }
  | { kind: 'htb'; bucket: BucketParams; defaultMinor: number; filters: SubnetFilter[] };

/** Which address of a packet names the peer: the source on the way into the pod, the destination on the way out. */
export type PeerField = 'src' | 'dst';

/** u32 keys matching `c` on the peer address (IPv4 header: src at 12, dst at 16; IPv6: 8 and 24); /0 needs none. */
export function subnetKeys(c: Cidr, field: PeerField): U32Key[] {
  const words = c.addr.family === 4 ? 1 : 4;
  const base = c.addr.family === 4 ? (field === 'src' ? 12 : 16) : (field === 'src' ? 8 : 24);
  const bits = BigInt(words * 32);
  const mask = maskValue(c.addr.family, c.prefix);
  const keys: U32Key[] = [];
  for (let i = 0; i < words; i++) {
    const shift = bits - 32n * BigInt(i + 1);
    const m = Number((mask >> shift) & 0xffffffffn);
    if (m === 0) continue; // the reference leaves out words the mask ignores
    keys.push({ mask: m, val: (Number((c.addr.value >> shift) & 0xffffffffn) & m) >>> 0, off: base + 4 * i });
  }
  return keys;
}

/** The shaping of one direction; `field` is the address of the peer in packets on that device. */
export function planShaping(bucket: BucketParams, subnets: readonly Cidr[], exclude: boolean, field: PeerField): ShapingPlan {
  if (subnets.length === 0) return { kind: 'tbf', bucket };
  // Excluded subnets go to the uncapped class, everything else to the capped default; listed ones the reverse.
  return {
    kind: 'htb',
    bucket,
    defaultMinor: exclude ? SHAPED_MINOR : UNSHAPED_MINOR,
    filters: subnets.map((c) => ({
      // The reference's priorities: one per protocol, since a priority cannot mix protocols.
      prio: c.addr.family === 4 ? 16 : 15,
      protocol: c.addr.family === 4 ? ETH_P_IP : ETH_P_IPV6,
      keys: subnetKeys(c, field),
      minor: exclude ? UNSHAPED_MINOR : SHAPED_MINOR,
    })),
  };
}

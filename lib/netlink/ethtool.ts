// The ethtool generic-netlink family (Documentation/networking/ethtool-netlink.rst, linux/ethtool_netlink.h):
// device features read and set by name, as `ethtool -k` / `ethtool -K` do on kernels 5.6 and later.
// Older kernels have no "ethtool" family: Ethtool.open() then fails with ENOENT and callers fall back.
import { attrMap, attrNested, attrStr, attrU32, formatAttr, getStr, parseAttrs, type NlAttr } from './attrs.ts';
import { Genl, parseGenlMsg, type GenlFamily } from './genl.ts';

/** Family name and the commands we use (enum ETHTOOL_MSG_*; the GET reply reuses the GET number). */
export const ETHTOOL_GENL_NAME = 'ethtool';
export const ETHTOOL_MSG_FEATURES_GET = 11;
export const ETHTOOL_MSG_FEATURES_SET = 12;

/** Request header (enum ETHTOOL_A_HEADER_*) and its flags (ETHTOOL_FLAG_*). */
export const ETHTOOL_A_HEADER_DEV_INDEX = 1;
export const ETHTOOL_A_HEADER_DEV_NAME = 2;
export const ETHTOOL_A_HEADER_FLAGS = 3;
export const ETHTOOL_FLAG_COMPACT_BITSETS = 1 << 0;
export const ETHTOOL_FLAG_OMIT_REPLY = 1 << 1;

/** FEATURES_* attributes (enum ETHTOOL_A_FEATURES_*). */
export const ETHTOOL_A_FEATURES_HEADER = 1;
export const ETHTOOL_A_FEATURES_HW = 2;
export const ETHTOOL_A_FEATURES_WANTED = 3;
export const ETHTOOL_A_FEATURES_ACTIVE = 4;

/** Bit sets (enum ETHTOOL_A_BITSET_*, ETHTOOL_A_BITSET_BITS_*, ETHTOOL_A_BITSET_BIT_*). */
export const ETHTOOL_A_BITSET_NOMASK = 1;
export const ETHTOOL_A_BITSET_BITS = 3;
export const ETHTOOL_A_BITSET_BITS_BIT = 1;
export const ETHTOOL_A_BITSET_BIT_INDEX = 1;
export const ETHTOOL_A_BITSET_BIT_NAME = 2;
export const ETHTOOL_A_BITSET_BIT_VALUE = 3;

/** The feature `ethtool -K <dev> tx off` clears on a VXLAN device (NETIF_F_HW_CSUM's name). */
export const TX_CHECKSUM_IP_GENERIC = 'tx-checksum-ip-generic';

function formatHeader(dev: string, flags: number): Uint8Array {
  const attrs = [attrStr(ETHTOOL_A_HEADER_DEV_NAME, dev)];
  if (flags !== 0) attrs.push(attrU32(ETHTOOL_A_HEADER_FLAGS, flags));
  return attrNested(ETHTOOL_A_FEATURES_HEADER, attrs, true);
}

/**
 * FEATURES_SET attributes changing only the named features: a verbose bit set with a mask (no NOMASK),
 * each bit by name, ETHTOOL_A_BITSET_BIT_VALUE present for on. The header asks for compact bit sets
 * in the reply, as ethtool does; the reply only lists what ended up differing from the request.
 */
export function formatFeaturesSet(dev: string, features: Readonly<Record<string, boolean>>): Uint8Array[] {
  const bits = Object.entries(features).map(([name, on]) => attrNested(ETHTOOL_A_BITSET_BITS_BIT, [
    attrStr(ETHTOOL_A_BITSET_BIT_NAME, name),
    ...(on ? [formatAttr(ETHTOOL_A_BITSET_BIT_VALUE, new Uint8Array(0))] : []),
  ], true));
  return [
    formatHeader(dev, ETHTOOL_FLAG_COMPACT_BITSETS),
    attrNested(ETHTOOL_A_FEATURES_WANTED, [attrNested(ETHTOOL_A_BITSET_BITS, bits, true)], true),
  ];
}

/** FEATURES_GET attributes for `dev`, verbose bit sets (bit names included). */
export function formatFeaturesGet(dev: string): Uint8Array[] {
  return [formatHeader(dev, 0)];
}

/**
 * The named bits of a verbose bit set -> value. With NOMASK the kernel lists only the bits that are on;
 * otherwise it lists the masked bits and marks the ones that are on with BIT_VALUE.
 */
export function parseBitset(set: NlAttr): Map<string, boolean> {
  const m = attrMap(parseAttrs(set.data));
  const noMask = m.has(ETHTOOL_A_BITSET_NOMASK);
  const out = new Map<string, boolean>();
  const bits = m.get(ETHTOOL_A_BITSET_BITS);
  if (bits === undefined) return out;
  for (const bit of parseAttrs(bits.data)) {
    if (bit.type !== ETHTOOL_A_BITSET_BITS_BIT) continue;
    const b = attrMap(parseAttrs(bit.data));
    const name = b.get(ETHTOOL_A_BITSET_BIT_NAME);
    if (name === undefined) continue;
    out.set(getStr(name), noMask || b.has(ETHTOOL_A_BITSET_BIT_VALUE));
  }
  return out;
}

/** The features that are on (ETHTOOL_A_FEATURES_ACTIVE) in a FEATURES_GET reply payload (genlmsghdr included). */
export function parseActiveFeatures(payload: Uint8Array): Set<string> {
  const active = attrMap(parseGenlMsg(payload).attrs).get(ETHTOOL_A_FEATURES_ACTIVE);
  if (active === undefined) throw new RangeError('FEATURES_GET reply without ETHTOOL_A_FEATURES_ACTIVE');
  return new Set([...parseBitset(active)].filter(([, on]) => on).map(([name]) => name));
}

/** Device features over the ethtool genetlink family; acts on the netns the socket was opened in. */
export class Ethtool {
  private constructor(private readonly genl: Genl, private readonly fam: GenlFamily) {}

  /** Opens a generic netlink socket in the calling thread's netns and resolves the family (ENOENT: kernel < 5.6). */
  static open(): Ethtool {
    return Ethtool.over(Genl.open());
  }

  /** Uses an existing Genl socket (closed by close()); resolves the family, closing the socket if that fails. */
  static over(genl: Genl): Ethtool {
    try {
      return new Ethtool(genl, genl.family(ETHTOOL_GENL_NAME));
    } catch (e) {
      genl.close();
      throw e;
    }
  }

  /** Closes the socket. */
  close(): void {
    this.genl.close();
  }

  /** Idempotent: sets the named features of `dev` on or off; NetlinkError when the device or a name is unknown. */
  setFeatures(dev: string, features: Readonly<Record<string, boolean>>): void {
    this.genl.request(`ETHTOOL_MSG_FEATURES_SET ${dev}`, this.fam, ETHTOOL_MSG_FEATURES_SET, formatFeaturesSet(dev, features));
  }

  /** The names of the features of `dev` that are active now. */
  activeFeatures(dev: string): Set<string> {
    const replies = this.genl.request(`ETHTOOL_MSG_FEATURES_GET ${dev}`, this.fam, ETHTOOL_MSG_FEATURES_GET, formatFeaturesGet(dev));
    const first = replies[0];
    if (first === undefined) throw new RangeError(`ETHTOOL_MSG_FEATURES_GET ${dev}: no reply`);
    return parseActiveFeatures(first);
  }
}

// nftables user data of a set element (NFTA_SET_ELEM_USERDATA): a run of TLVs { u8 type; u8 len;
// value[len] } as libnftnl writes them (include/udata.h). nft keeps an element's `comment` here as a
// NUL-terminated string of type NFTNL_UDATA_SET_ELEM_COMMENT, and refuses to show one without the NUL.
import { NFT_USERDATA_MAXLEN, NFTNL_UDATA_SET_ELEM_COMMENT } from './constants.ts';

/** One user-data TLV; unknown types are kept as raw bytes. */
export interface UdataTlv {
  readonly type: number;
  readonly value: Uint8Array;
}

/** Formats TLVs into NFTA_SET_ELEM_USERDATA bytes; throws when a value or the whole exceeds the limits. */
export function formatUdata(tlvs: readonly UdataTlv[]): Uint8Array {
  let n = 0;
  for (const t of tlvs) {
    if (t.value.length > 255) throw new RangeError(`user data TLV ${t.type}: value of ${t.value.length} bytes exceeds 255`);
    n += 2 + t.value.length;
  }
  if (n > NFT_USERDATA_MAXLEN) throw new RangeError(`user data of ${n} bytes exceeds NFT_USERDATA_MAXLEN (${NFT_USERDATA_MAXLEN})`);
  const out = new Uint8Array(n);
  let o = 0;
  for (const t of tlvs) {
    out[o] = t.type;
    out[o + 1] = t.value.length;
    out.set(t.value, o + 2);
    o += 2 + t.value.length;
  }
  return out;
}

/** Parses user-data TLVs; a truncated trailing TLV ends the run (as libnftnl's parser does). */
export function parseUdata(b: Uint8Array): UdataTlv[] {
  const out: UdataTlv[] = [];
  let o = 0;
  while (o + 2 <= b.length) {
    const type = b[o] ?? 0;
    const len = b[o + 1] ?? 0;
    if (o + 2 + len > b.length) break;
    out.push({ type, value: b.subarray(o + 2, o + 2 + len) });
    o += 2 + len;
  }
  return out;
}

/** User data holding just an element comment (NUL-terminated, as nft writes and expects it). */
export function formatElemComment(comment: string): Uint8Array {
  const text = Buffer.from(comment, 'utf8');
  const value = new Uint8Array(text.length + 1);
  value.set(text, 0);
  return formatUdata([{ type: NFTNL_UDATA_SET_ELEM_COMMENT, value }]);
}

/** The comment in an element's user data, if any (text up to the NUL). */
export function parseElemComment(b: Uint8Array): string | undefined {
  const tlv = parseUdata(b).find((t) => t.type === NFTNL_UDATA_SET_ELEM_COMMENT);
  if (tlv === undefined) return undefined;
  const nul = tlv.value.indexOf(0);
  return Buffer.from(tlv.value.buffer, tlv.value.byteOffset, nul < 0 ? tlv.value.length : nul).toString('utf8');
}

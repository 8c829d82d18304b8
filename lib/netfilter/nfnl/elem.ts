// Set element messages (NFT_MSG_NEWSETELEM / DELSETELEM / GETSETELEM, nf_tables.h): struct nfgenmsg,
// then NFTA_SET_ELEM_LIST_TABLE/SET and a nest of NFTA_LIST_ELEM, each holding KEY (a nest with
// NFTA_DATA_VALUE), optional DATA (value or verdict), FLAGS (__be32) and USERDATA (the comment TLVs).
import { attrMap, attrNested, attrStr, concat, formatAttr, getStr, parseAttrs, view, type NlAttr } from '../../netlink/attrs.ts';
import {
  NFNETLINK_V0, NFTA_DATA_VALUE, NFTA_DATA_VERDICT, NFTA_LIST_ELEM, NFTA_SET_ELEM_DATA, NFTA_SET_ELEM_FLAGS,
  NFTA_SET_ELEM_KEY, NFTA_SET_ELEM_LIST_ELEMENTS, NFTA_SET_ELEM_LIST_SET, NFTA_SET_ELEM_LIST_TABLE, NFTA_SET_ELEM_USERDATA,
  NFTA_VERDICT_CHAIN, NFTA_VERDICT_CODE, NFPROTO_BRIDGE, NFPROTO_INET, NFPROTO_IPV4, NFPROTO_IPV6, VERDICT_CODES,
} from './constants.ts';
import { formatElemComment, parseElemComment } from './udata.ts';
import type { NftFamily } from '../types.ts';

/** A verdict as map data: `accept`, `drop`, `return`, `continue`, or a jump/goto to a chain. */
export type NfnlVerdict =
  | { readonly verdict: 'accept' | 'drop' | 'return' | 'continue' }
  | { readonly verdict: 'jump' | 'goto'; readonly chain: string };

/** One element on the wire: raw key bytes, optional map data, flags and comment. */
export interface NfnlElem {
  readonly key: Uint8Array;
  /** Map data: raw value bytes, or a verdict for a verdict map. */
  readonly data?: Uint8Array | NfnlVerdict;
  /** NFT_SET_ELEM_* flags, e.g. NFT_SET_ELEM_INTERVAL_END. */
  readonly flags?: number;
  readonly comment?: string;
}

/** nfgen_family of a table family. */
export function nfproto(family: NftFamily): number {
  switch (family) {
    case 'inet': return NFPROTO_INET;
    case 'ip': return NFPROTO_IPV4;
    case 'ip6': return NFPROTO_IPV6;
    case 'bridge': return NFPROTO_BRIDGE;
  }
}

/** struct nfgenmsg { u8 nfgen_family; u8 version; __be16 res_id; } (nfnetlink.h). */
export function formatNfgenmsg(family: number, resId = 0): Uint8Array {
  const b = new Uint8Array(4);
  b[0] = family;
  b[1] = NFNETLINK_V0;
  view(b).setUint16(2, resId, false);
  return b;
}

function be32(type: number, v: number): Uint8Array {
  const b = new Uint8Array(4);
  view(b).setUint32(0, v >>> 0, false);
  return formatAttr(type, b);
}

function formatData(data: Uint8Array | NfnlVerdict): Uint8Array {
  if (data instanceof Uint8Array) return attrNested(NFTA_SET_ELEM_DATA, [formatAttr(NFTA_DATA_VALUE, data)]);
  const parts = [be32(NFTA_VERDICT_CODE, VERDICT_CODES[data.verdict])];
  if (data.verdict === 'jump' || data.verdict === 'goto') parts.push(attrStr(NFTA_VERDICT_CHAIN, data.chain));
  return attrNested(NFTA_SET_ELEM_DATA, [attrNested(NFTA_DATA_VERDICT, parts)]);
}

/** Formats one NFTA_LIST_ELEM nest. */
export function formatElem(e: NfnlElem): Uint8Array {
  const parts = [attrNested(NFTA_SET_ELEM_KEY, [formatAttr(NFTA_DATA_VALUE, e.key)])];
  if (e.data !== undefined) parts.push(formatData(e.data));
  if (e.flags !== undefined && e.flags !== 0) parts.push(be32(NFTA_SET_ELEM_FLAGS, e.flags));
  if (e.comment !== undefined) parts.push(formatAttr(NFTA_SET_ELEM_USERDATA, formatElemComment(e.comment)));
  return attrNested(NFTA_LIST_ELEM, parts);
}

/** Payload of a NEWSETELEM/DELSETELEM request (or, with no elements, a GETSETELEM dump request). */
export function formatSetElemPayload(family: NftFamily, table: string, set: string, elems: readonly NfnlElem[] = []): Uint8Array {
  const parts = [formatNfgenmsg(nfproto(family)), attrStr(NFTA_SET_ELEM_LIST_TABLE, table), attrStr(NFTA_SET_ELEM_LIST_SET, set)];
  if (elems.length > 0) parts.push(attrNested(NFTA_SET_ELEM_LIST_ELEMENTS, elems.map(formatElem)));
  return concat(parts);
}

/** An element as the kernel lists it, with its table and set names. */
export interface NfnlListedElem {
  readonly key: Uint8Array;
  readonly data?: Uint8Array | NfnlVerdict;
  readonly flags: number;
  readonly comment?: string;
  /** The raw user data, kept whole (other TLVs than the comment are not interpreted). */
  readonly userdata?: Uint8Array;
}

function valueOf(a: NlAttr | undefined): Uint8Array | undefined {
  if (a === undefined) return undefined;
  const v = attrMap(parseAttrs(a.data)).get(NFTA_DATA_VALUE);
  return v === undefined ? undefined : Uint8Array.from(v.data);
}

function parseData(a: NlAttr): Uint8Array | NfnlVerdict | undefined {
  const m = attrMap(parseAttrs(a.data));
  const verdict = m.get(NFTA_DATA_VERDICT);
  if (verdict === undefined) return valueOf(a);
  const vm = attrMap(parseAttrs(verdict.data));
  const codeAttr = vm.get(NFTA_VERDICT_CODE);
  const code = codeAttr === undefined ? NaN : view(codeAttr.data).getInt32(0, false);
  const name = (Object.keys(VERDICT_CODES) as Array<keyof typeof VERDICT_CODES>).find((k) => VERDICT_CODES[k] === code);
  const chain = vm.get(NFTA_VERDICT_CHAIN);
  if ((name === 'jump' || name === 'goto') && chain !== undefined) return { verdict: name, chain: getStr(chain) };
  if (name === 'accept' || name === 'drop' || name === 'return' || name === 'continue') return { verdict: name };
  return undefined;
}

/** Parses the elements of one NEWSETELEM message of a dump (payload after the nlmsghdr). */
export function parseSetElemPayload(payload: Uint8Array): { table: string; set: string; elems: NfnlListedElem[] } {
  const m = attrMap(parseAttrs(payload.subarray(4)));
  const table = m.get(NFTA_SET_ELEM_LIST_TABLE);
  const set = m.get(NFTA_SET_ELEM_LIST_SET);
  const list = m.get(NFTA_SET_ELEM_LIST_ELEMENTS);
  const elems: NfnlListedElem[] = [];
  for (const item of list === undefined ? [] : parseAttrs(list.data)) {
    if (item.type !== NFTA_LIST_ELEM) continue;
    const em = attrMap(parseAttrs(item.data));
    const key = valueOf(em.get(NFTA_SET_ELEM_KEY));
    if (key === undefined) continue;
    const flagsAttr = em.get(NFTA_SET_ELEM_FLAGS);
    const dataAttr = em.get(NFTA_SET_ELEM_DATA);
    const data = dataAttr === undefined ? undefined : parseData(dataAttr);
    const ud = em.get(NFTA_SET_ELEM_USERDATA);
    const comment = ud === undefined ? undefined : parseElemComment(ud.data);
    elems.push({
      key,
      flags: flagsAttr === undefined ? 0 : view(flagsAttr.data).getUint32(0, false),
      ...(data === undefined ? {} : { data }),
      ...(ud === undefined ? {} : { userdata: Uint8Array.from(ud.data) }),
      ...(comment === undefined ? {} : { comment }),
    });
  }
  return { table: table === undefined ? '' : getStr(table), set: set === undefined ? '' : getStr(set), elems };
}

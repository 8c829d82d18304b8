// u32 classifier options (TCA_U32_*, struct tc_u32_sel/tc_u32_key, linux/pkt_cls.h) and the mirred
// action (TCA_ACT_*, struct tc_mirred, linux/tc_act/tc_mirred.h) they can carry.
import { LE, attrMap, attrNested, attrStr, attrU32, formatAttr, getStr, getU32, parseAttrs, view, type NlAttr } from './attrs.ts';

export const TCA_U32_CLASSID = 1;
export const TCA_U32_DIVISOR = 4;
export const TCA_U32_SEL = 5;
export const TCA_U32_ACT = 7;
/** tc_u32_sel.flags: a match ends classification (no link to another hash table). */
export const TC_U32_TERMINAL = 1;

export const TCA_ACT_KIND = 1;
export const TCA_ACT_OPTIONS = 2;
export const TCA_MIRRED_PARMS = 2;
/** tc_mirred.eaction: redirect to the device's egress (linux/tc_act/tc_mirred.h). */
export const TCA_EGRESS_REDIR = 1;
/** Generic action verdict: the packet is consumed (linux/pkt_cls.h TC_ACT_STOLEN). */
export const TC_ACT_STOLEN = 4;

const SEL_LEN = 16;
const KEY_LEN = 16;
const MIRRED_LEN = 28;

/** One 32-bit match: (packet[off..off+4] & mask) == val, mask and val as host integers. */
export interface U32Key {
  mask: number;
  val: number;
  /** Byte offset from the network header. */
  off: number;
}

/** A mirred action: where it sends the packet and how. */
export interface MirredAction {
  eaction: number;
  ifindex: number;
  /** Verdict after mirroring (TC_ACT_STOLEN for a redirect). */
  action: number;
}

/** u32 filter parameters we send and read back. */
export interface U32Options {
  /** Class the match selects (flowid); 0 when none. */
  classid: number;
  /** The keys, all of which must match; empty matches every packet. */
  keys: U32Key[];
  actions: MirredAction[];
  /** Set on the hash-table entries the kernel dumps beside the real filters. */
  divisor?: number;
}

/** struct tc_u32_sel with TC_U32_TERMINAL and its keys; no keys becomes one all-zero key (match all), as tc sends. */
export function formatU32Sel(keys: readonly U32Key[]): Uint8Array {
  const ks = keys.length > 0 ? keys : [{ mask: 0, val: 0, off: 0 }];
  const b = new Uint8Array(SEL_LEN + KEY_LEN * ks.length);
  const dv = view(b);
  dv.setUint8(0, TC_U32_TERMINAL);
  dv.setUint8(2, ks.length);
  ks.forEach((k, i) => {
    const o = SEL_LEN + KEY_LEN * i;
    dv.setUint32(o, k.mask >>> 0, false);
    dv.setUint32(o + 4, k.val >>> 0, false);
    dv.setInt32(o + 8, k.off, LE);
  });
  return b;
}

/** One mirred action entry (its position in the action list is `prio`, from 1). */
export function formatMirredAction(prio: number, m: MirredAction): Uint8Array {
  const b = new Uint8Array(MIRRED_LEN);
  const dv = view(b);
  dv.setInt32(8, m.action, LE);
  dv.setInt32(20, m.eaction, LE);
  dv.setUint32(24, m.ifindex >>> 0, LE);
  return attrNested(prio, [attrStr(TCA_ACT_KIND, 'mirred'), attrNested(TCA_ACT_OPTIONS, [formatAttr(TCA_MIRRED_PARMS, b)])]);
}

/** TCA_OPTIONS children of a u32 filter. */
export function formatU32Options(o: Pick<U32Options, 'classid' | 'keys' | 'actions'>): Uint8Array[] {
  const out: Uint8Array[] = [];
  if (o.classid !== 0) out.push(attrU32(TCA_U32_CLASSID, o.classid));
  out.push(formatAttr(TCA_U32_SEL, formatU32Sel(o.keys)));
  if (o.actions.length > 0) out.push(attrNested(TCA_U32_ACT, o.actions.map((a, i) => formatMirredAction(i + 1, a))));
  return out;
}

/** Parses a dumped u32 filter's options; keys with mask 0 (match-all padding) are dropped. */
export function parseU32Options(opts: readonly NlAttr[]): U32Options {
  const m = attrMap(opts);
  const cls = m.get(TCA_U32_CLASSID);
  const out: U32Options = { classid: cls ? getU32(cls) : 0, keys: [], actions: [] };
  const div = m.get(TCA_U32_DIVISOR);
  if (div) out.divisor = getU32(div);
  const sel = m.get(TCA_U32_SEL);
  if (sel && sel.data.length >= SEL_LEN) {
    const dv = view(sel.data);
    const n = Math.min(dv.getUint8(2), Math.floor((sel.data.length - SEL_LEN) / KEY_LEN));
    for (let i = 0; i < n; i++) {
      const o = SEL_LEN + KEY_LEN * i;
      const k = { mask: dv.getUint32(o, false), val: dv.getUint32(o + 4, false), off: dv.getInt32(o + 8, LE) };
      if (k.mask !== 0) out.keys.push(k);
    }
  }
  const act = m.get(TCA_U32_ACT);
  if (act) out.actions = parseActions(act.data);
  return out;
}

/** The mirred actions of an action list (other kinds are skipped). */
export function parseActions(data: Uint8Array): MirredAction[] {
  const out: MirredAction[] = [];
  for (const entry of [...parseAttrs(data)].sort((a, b) => a.type - b.type)) {
    const e = attrMap(parseAttrs(entry.data));
    const kind = e.get(TCA_ACT_KIND);
    const opts = e.get(TCA_ACT_OPTIONS);
    if (!kind || getStr(kind) !== 'mirred' || !opts) continue;
    const p = attrMap(parseAttrs(opts.data)).get(TCA_MIRRED_PARMS);
    if (!p || p.data.length < MIRRED_LEN) continue;
    const dv = view(p.data);
    out.push({ action: dv.getInt32(8, LE), eaction: dv.getInt32(20, LE), ifindex: dv.getUint32(24, LE) });
  }
  return out;
}

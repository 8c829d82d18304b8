// Hierarchical token bucket options: TCA_HTB_*, struct tc_htb_glob (qdisc) and struct tc_htb_opt
// (class), linux/pkt_sched.h.
import { LE, formatAttr, view, type NlAttr } from './attrs.ts';
import { TC_RATESPEC_LEN, attrU64, getU64, needsRate64, readRatespecRate, writeRatespec } from './tc-rate.ts';

export const TCA_HTB_PARMS = 1;
export const TCA_HTB_INIT = 2;
export const TCA_HTB_RATE64 = 6;
export const TCA_HTB_CEIL64 = 7;

/** sizeof(struct tc_htb_glob): version, rate2quantum, defcls, debug, direct_pkts (u32 each). */
export const TC_HTB_GLOB_LEN = 20;
/** sizeof(struct tc_htb_opt): rate and ceil ratespecs, buffer, cbuffer, quantum, level, prio (u32 each). */
export const TC_HTB_OPT_LEN = 2 * TC_RATESPEC_LEN + 20;
/** The only version htb_init accepts (HTB_VER >> 16). */
export const HTB_VERSION = 3;

/** htb qdisc parameters. */
export interface HtbQdiscOptions {
  /** Minor number of the class unclassified traffic goes to. */
  defcls: number;
  /** Divides a class's rate into its DRR quantum when none is given (tc's default 10). */
  rate2quantum: number;
}

/** htb class parameters; rates in bytes per second, buffers in psched ticks. */
export interface HtbClassOptions {
  rate: bigint;
  ceil: bigint;
  buffer: number;
  cbuffer: number;
}

/** TCA_OPTIONS children of an htb qdisc. */
export function formatHtbQdiscOptions(o: HtbQdiscOptions): Uint8Array[] {
  const b = new Uint8Array(TC_HTB_GLOB_LEN);
  const dv = view(b);
  dv.setUint32(0, HTB_VERSION, LE);
  dv.setUint32(4, o.rate2quantum, LE);
  dv.setUint32(8, o.defcls, LE);
  return [formatAttr(TCA_HTB_INIT, b)];
}

/** Parses a dumped htb qdisc's options; null without TCA_HTB_INIT. */
export function parseHtbQdiscOptions(opts: readonly NlAttr[]): HtbQdiscOptions | null {
  const a = opts.find((x) => x.type === TCA_HTB_INIT);
  if (!a || a.data.length < TC_HTB_GLOB_LEN) return null;
  const dv = view(a.data);
  return { rate2quantum: dv.getUint32(4, LE), defcls: dv.getUint32(8, LE) };
}

/**
 * TCA_OPTIONS children of an htb class. The ratespecs say TC_LINKLAYER_ETHERNET, so the kernel
 * needs no TCA_HTB_RTAB/CTAB (htb_change_class reads them only for TC_LINKLAYER_UNAWARE).
 */
export function formatHtbClassOptions(o: HtbClassOptions): Uint8Array[] {
  const b = new Uint8Array(TC_HTB_OPT_LEN);
  const dv = view(b);
  writeRatespec(dv, 0, o.rate);
  writeRatespec(dv, TC_RATESPEC_LEN, o.ceil);
  dv.setUint32(2 * TC_RATESPEC_LEN, o.buffer >>> 0, LE);
  dv.setUint32(2 * TC_RATESPEC_LEN + 4, o.cbuffer >>> 0, LE);
  const out = [formatAttr(TCA_HTB_PARMS, b)];
  if (needsRate64(o.rate)) out.push(attrU64(TCA_HTB_RATE64, o.rate));
  if (needsRate64(o.ceil)) out.push(attrU64(TCA_HTB_CEIL64, o.ceil));
  return out;
}

/** Parses a dumped htb class's options; null without TCA_HTB_PARMS. */
export function parseHtbClassOptions(opts: readonly NlAttr[]): HtbClassOptions | null {
  const p = opts.find((x) => x.type === TCA_HTB_PARMS);
  if (!p || p.data.length < TC_HTB_OPT_LEN) return null;
  const dv = view(p.data);
  const r64 = opts.find((x) => x.type === TCA_HTB_RATE64);
  const c64 = opts.find((x) => x.type === TCA_HTB_CEIL64);
  return {
    rate: r64 ? getU64(r64) : BigInt(readRatespecRate(dv, 0)),
    ceil: c64 ? getU64(c64) : BigInt(readRatespecRate(dv, TC_RATESPEC_LEN)),
    buffer: dv.getUint32(2 * TC_RATESPEC_LEN, LE),
    cbuffer: dv.getUint32(2 * TC_RATESPEC_LEN + 4, LE),
  };
}

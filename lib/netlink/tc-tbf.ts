// Token bucket filter options: TCA_TBF_* and struct tc_tbf_qopt (linux/pkt_sched.h).
import { LE, formatAttr, view, type NlAttr } from './attrs.ts';
import { TC_RATESPEC_LEN, attrU64, getU64, needsRate64, readRatespecRate, writeRatespec } from './tc-rate.ts';

export const TCA_TBF_PARMS = 1;
export const TCA_TBF_RATE64 = 4;

/** sizeof(struct tc_tbf_qopt): rate and peakrate ratespecs, u32 limit, u32 buffer, u32 mtu. */
export const TC_TBF_QOPT_LEN = 2 * TC_RATESPEC_LEN + 12;

/** tbf parameters as the kernel takes and dumps them. */
export interface TbfOptions {
  /** Bytes per second. */
  rate: bigint;
  /** Queue limit in bytes. */
  limit: number;
  /** Bucket size as a time at `rate`, in psched ticks (1/64 us with /proc/net/psched's usual 1000/64). */
  buffer: number;
}

/** TCA_OPTIONS children of a tbf qdisc. */
export function formatTbfOptions(o: TbfOptions): Uint8Array[] {
  const b = new Uint8Array(TC_TBF_QOPT_LEN);
  const dv = view(b);
  writeRatespec(dv, 0, o.rate);
  // peakrate stays all zero: no peak rate, so no mtu either.
  dv.setUint32(2 * TC_RATESPEC_LEN, o.limit >>> 0, LE);
  dv.setUint32(2 * TC_RATESPEC_LEN + 4, o.buffer >>> 0, LE);
  const out = [formatAttr(TCA_TBF_PARMS, b)];
  if (needsRate64(o.rate)) out.push(attrU64(TCA_TBF_RATE64, o.rate));
  return out;
}

/** Parses a dumped tbf's TCA_OPTIONS children; null when TCA_TBF_PARMS is missing or short. */
export function parseTbfOptions(opts: readonly NlAttr[]): TbfOptions | null {
  const p = opts.find((a) => a.type === TCA_TBF_PARMS);
  if (!p || p.data.length < TC_TBF_QOPT_LEN) return null;
  const dv = view(p.data);
  const r64 = opts.find((a) => a.type === TCA_TBF_RATE64);
  return {
    rate: r64 ? getU64(r64) : BigInt(readRatespecRate(dv, 0)),
    limit: dv.getUint32(2 * TC_RATESPEC_LEN, LE),
    buffer: dv.getUint32(2 * TC_RATESPEC_LEN + 4, LE),
  };
}

// struct tc_ratespec (linux/pkt_sched.h) and the u64 rate attributes that carry rates of 2^32 bytes/s
// and more, shared by tbf and htb.
import { LE, formatAttr, view, type NlAttr } from './attrs.ts';

/** sizeof(struct tc_ratespec): u8 cell_log, u8 linklayer, u16 overhead, s16 cell_align, u16 mpu, u32 rate. */
export const TC_RATESPEC_LEN = 12;
/** TC_LINKLAYER_ETHERNET: tells the kernel to size packets itself, so no rate table is needed. */
export const TC_LINKLAYER_ETHERNET = 1;

/** Writes a ratespec of `bytesPerSec` at `offset` (rates of 2^32 and more are capped here and sent in a u64 attribute). */
export function writeRatespec(dv: DataView, offset: number, bytesPerSec: bigint): void {
  dv.setUint8(offset + 1, TC_LINKLAYER_ETHERNET);
  // cell_align -1 as tc and the Go netlink library send it; unused without a rate table.
  dv.setInt16(offset + 4, -1, LE);
  dv.setUint32(offset + 8, bytesPerSec >= 1n << 32n ? 0xffffffff : Number(bytesPerSec), LE);
}

/** The 32-bit rate of a ratespec at `offset`. */
export function readRatespecRate(dv: DataView, offset: number): number {
  return dv.getUint32(offset + 8, LE);
}

/** A u64 attribute (TCA_TBF_RATE64, TCA_HTB_RATE64, ...). */
export function attrU64(type: number, v: bigint): Uint8Array {
  const b = new Uint8Array(8);
  view(b).setBigUint64(0, v, LE);
  return formatAttr(type, b);
}

/** Reads a u64 attribute payload. */
export function getU64(a: NlAttr): bigint {
  return view(a.data).getBigUint64(0, LE);
}

/** True when a rate needs its u64 attribute (the ratespec field is 32 bits). */
export function needsRate64(bytesPerSec: bigint): boolean {
  return bytesPerSec >= 1n << 32n;
}

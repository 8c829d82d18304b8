// The token-bucket numbers the reference computes from a rate and burst in bits, with its
// constants (25 ms of queueing latency; psched ticks from /proc/net/psched), as pure functions.
import { readFileSync } from 'node:fs';
import type { Limit } from './config.ts';

/** Microseconds per second (the psched time unit, iproute2's TIME_UNITS_PER_SEC). */
export const TIME_UNITS_PER_SEC = 1_000_000;
/** The queue a tbf may hold, as time at the rate (the reference's latencyInMillis 25). */
export const LATENCY_US = 25_000;
/** psched ticks per microsecond on every current kernel (/proc/net/psched "000003e8 00000040 ..." = 1000/64). */
export const DEFAULT_TICK_IN_USEC = 15.625;
const U32_MAX = 0xffffffff;

/** Go's uint32(x) for a non-negative float, except that values past 2^32 - 1 saturate instead of wrapping. */
export function u32(x: number): number {
  return x >= U32_MAX ? U32_MAX : Math.trunc(x);
}

/** Ticks per microsecond from /proc/net/psched's text (t2us, us2t, clock resolution), as iproute2 and the Go library compute it. */
export function parseTickInUsec(text: string): number {
  const [t2us, us2t, res] = text.trim().split(/\s+/).map((h) => parseInt(h, 16));
  if (t2us === undefined || us2t === undefined || res === undefined || !(us2t > 0)) return DEFAULT_TICK_IN_USEC;
  const num = res === 1_000_000_000 ? us2t : t2us; // the kernel's old "compatibility" clock
  return (num / us2t) * (res / TIME_UNITS_PER_SEC);
}

/** This kernel's ticks per microsecond (DEFAULT_TICK_IN_USEC when /proc/net/psched cannot be read). */
export function readTickInUsec(): number {
  try {
    return parseTickInUsec(readFileSync('/proc/net/psched', 'latin1'));
  } catch {
    return DEFAULT_TICK_IN_USEC;
  }
}

/** One direction's qdisc parameters. */
export interface BucketParams {
  /** Bytes per second (rate / 8, rounded down). */
  rateBytes: bigint;
  burstBytes: number;
  /** The bucket as time at the rate, in psched ticks. */
  buffer: number;
  /** tbf queue limit in bytes: 25 ms at the rate plus the burst. */
  limit: number;
}

/** buffer = ticks(burst / rate seconds), truncated at each step as the reference's uint32 conversions do. */
export function bufferTicks(rateBytes: bigint, burstBytes: number, tickInUsec: number): number {
  const us = u32((burstBytes * TIME_UNITS_PER_SEC) / Number(rateBytes));
  return u32(us * tickInUsec);
}

/** limit = bytes sent in LATENCY_US at the rate + the burst. */
export function tbfLimit(rateBytes: bigint, burstBytes: number): number {
  return u32(u32((Number(rateBytes) * LATENCY_US) / TIME_UNITS_PER_SEC) + burstBytes);
}

/** The qdisc numbers for a configured limit. */
export function bucketParams(l: Limit, tickInUsec: number): BucketParams {
  const rateBytes = l.rate / 8n;
  const burstBytes = Number(l.burst / 8n);
  return { rateBytes, burstBytes, buffer: bufferTicks(rateBytes, burstBytes, tickInUsec), limit: tbfLimit(rateBytes, burstBytes) };
}

/** The buffer a tbf dumps back on kernels that keep it as u32 nanoseconds (ticks << 6 capped at ~0U); newer ones dump what was sent. */
export function tbfDumpedBuffer(buffer: number): number {
  return Math.min(buffer, Math.floor(U32_MAX / 64));
}

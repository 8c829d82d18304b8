// When reconciles run: on demand (lease events, netlink events), coalesced by a short debounce so a
// burst of notifications costs one pass, and periodically as a safety net for anything the events
// missed. One pass at a time; a trigger during a pass schedules exactly one more. With maxDuty the
// safety net stretches as passes grow (a full pass over 5,000 peers every second would keep a core
// busy and hold every join behind it): the next periodic pass waits at least passMs / maxDuty.

/** Timing knobs. */
export interface LoopOptions {
  /** Delay after a trigger, so that bursts coalesce (ms). */
  debounceMs: number;
  /** Period of the safety-net pass (ms); the shortest one with maxDuty. */
  periodMs: number;
  /** Largest share of wall time the periodic passes may take (0 < maxDuty <= 1); unset: a fixed period. */
  maxDuty?: number;
}

/** The wait before the next periodic pass after one that took `passMs` (pure). */
export function nextPeriodMs(periodMs: number, passMs: number, maxDuty: number | undefined): number {
  if (maxDuty === undefined || !(passMs > 0)) return periodMs;
  return Math.max(periodMs, Math.ceil(passMs / maxDuty));
}

/** Runs `pass(reason)` on triggers and on a timer; pass is synchronous (netlink calls are). */
export class ReconcileLoop {
  private timer: NodeJS.Timeout | undefined;
  private pending: NodeJS.Timeout | undefined;
  private reasons = new Set<string>();
  private stopped = true;

  constructor(private readonly pass: (reason: string) => void, private readonly o: LoopOptions) {}

  /** Starts the periodic pass (idempotent). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(this.o.periodMs);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => { this.timer = undefined; this.trigger('periodic', 0); }, ms);
  }

  /** Requests a pass after `delayMs` (default the debounce); triggers before it runs are merged. */
  trigger(reason: string, delayMs = this.o.debounceMs): void {
    if (this.stopped) return;
    this.reasons.add(reason);
    if (this.pending !== undefined) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      const periodic = this.reasons.has('periodic');
      const why = [...this.reasons].sort().join(',');
      this.reasons.clear();
      const t0 = performance.now();
      try {
        this.pass(why);
      } finally {
        // The next safety-net pass counts from the end of this one, whatever else triggered it.
        if (periodic && !this.stopped) this.schedule(nextPeriodMs(this.o.periodMs, performance.now() - t0, this.o.maxDuty));
      }
    }, delayMs);
  }

  /** Stops timers; a pass in progress finishes (passes are synchronous). Idempotent. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.pending !== undefined) clearTimeout(this.pending);
    this.timer = undefined;
    this.pending = undefined;
  }
}

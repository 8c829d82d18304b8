// When reconciles run: on demand (lease events, netlink events), coalesced by a short debounce so a
// burst of notifications costs one pass, and periodically as a safety net for anything the events
// missed. One pass at a time; a trigger during a pass schedules exactly one more.

/** Timing knobs. */
export interface LoopOptions {
  /** Delay after a trigger, so that bursts coalesce (ms). */
  debounceMs: number;
  /** Period of the safety-net pass (ms). */
  periodMs: number;
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
    this.timer = setInterval(() => this.trigger('periodic', 0), this.o.periodMs);
  }

  /** Requests a pass after `delayMs` (default the debounce); triggers before it runs are merged. */
  trigger(reason: string, delayMs = this.o.debounceMs): void {
    if (this.stopped) return;
    this.reasons.add(reason);
    if (this.pending !== undefined) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      const why = [...this.reasons].sort().join(',');
      this.reasons.clear();
      this.pass(why);
    }, delayMs);
  }

  /** Stops timers; a pass in progress finishes (passes are synchronous). Idempotent. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    if (this.pending !== undefined) clearTimeout(this.pending);
    this.timer = undefined;
    this.pending = undefined;
  }
}

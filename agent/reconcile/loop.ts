// When reconciles run: on demand (lease events, netlink events), coalesced by a short debounce so a
// burst of notifications costs one pass, and periodically as a safety net for anything the events
// missed. A pass either runs to its end at once or returns its remaining slices (a full pass over
// 5,000 peers takes 200-300 ms: desired state, three kernel dumps, the diff), which run one per turn
// of the event loop; a trigger arriving meanwhile runs its pass between two slices, so a join is
// programmed without waiting for the whole full pass. One sliced pass at a time: one returned while
// another runs waits for it (at most one waits; a later one is dropped unstarted, as it would do the
// same). With maxDuty the safety net stretches as passes grow: the next periodic pass waits at least
// busyMs / maxDuty after any pass that held the loop busyMs in all, periodic or not.

/** Timing knobs. */
export interface LoopOptions {
  /** Delay after a trigger, so that bursts coalesce (ms). */
  debounceMs: number;
  /** Period of the safety-net pass (ms); the shortest one with maxDuty. */
  periodMs: number;
  /** Largest share of wall time the periodic passes may take (0 < maxDuty <= 1); unset: a fixed period. */
  maxDuty?: number;
  /** Called after every pass with where its time went (weftd logs it at debug). */
  onPass?: (t: PassTiming) => void;
}

/** Where one pass's time went, to tell what a slow join waited behind. */
export interface PassTiming {
  /** The trigger reasons, comma-joined. */
  why: string;
  /** True for a pass run in slices (a full one). */
  sliced: boolean;
  /** How late the trigger's timer fired past its delay: the event loop was busy elsewhere (ms). */
  lateMs: number;
  /** Each slice's duration (ms): for a sliced pass the call that returned the slices first, then each slice; one entry for a pass run at once. */
  slicesMs: number[];
  /** From the trigger's pass start to its last slice's end: a sliced pass's queueing behind another and the passes run between its slices included (ms). */
  wallMs: number;
  /** Passes run between this one's slices. */
  interleaved: number;
}

/** The rest of a pass, one slice per next(); each slice is synchronous. */
export type PassSlices = Iterator<unknown, unknown, undefined>;

/** Runs every slice of `g` at once and returns its result (a pass that must finish before anything else, e.g. the first). */
export function runToEnd<T>(g: Iterator<unknown, T, undefined>): T {
  for (;;) {
    const r = g.next();
    if (r.done === true) return r.value;
  }
}

/** The wait before the next periodic pass after one that took `passMs` (pure). */
export function nextPeriodMs(periodMs: number, passMs: number, maxDuty: number | undefined): number {
  if (maxDuty === undefined || !(passMs > 0)) return periodMs;
  return Math.max(periodMs, Math.ceil(passMs / maxDuty));
}

interface Sliced {
  it: PassSlices;
  periodic: boolean;
  busyMs: number;
  timing: PassTiming;
  t0: number;
}

/** Runs `pass(reason)` on triggers and on a timer; a pass is synchronous or returns its slices. */
export class ReconcileLoop {
  private timer: NodeJS.Timeout | undefined;
  private timerDue = 0;
  private pending: NodeJS.Timeout | undefined;
  /** When the pending timer is due (performance.now()), to measure how late it fires. */
  private pendingDue = 0;
  private reasons = new Set<string>();
  private stopped = true;
  private running: Sliced | undefined;
  private waiting: Sliced | undefined;
  private next: NodeJS.Immediate | undefined;
  /** A slice found a trigger pending and left the turn to it; the trigger's pass resumes the slices. */
  private yielded = false;

  constructor(private readonly pass: (reason: string) => void | PassSlices, private readonly o: LoopOptions) {}

  /** Starts the periodic pass (idempotent). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(this.o.periodMs);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timerDue = performance.now() + ms;
    this.timer = setTimeout(() => { this.timer = undefined; this.trigger('periodic', 0); }, ms);
  }

  /** Requests a pass after `delayMs` (default the debounce); triggers before it runs are merged. */
  trigger(reason: string, delayMs = this.o.debounceMs): void {
    if (this.stopped) return;
    this.reasons.add(reason);
    if (this.pending !== undefined) return;
    this.pendingDue = performance.now() + delayMs;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      try {
        this.runTriggered();
      } finally {
        if (this.yielded && !this.stopped) { this.yielded = false; this.stepSoon(); }
      }
    }, delayMs);
  }

  private runTriggered(): void {
    const periodic = this.reasons.has('periodic');
    const why = [...this.reasons].sort().join(',');
    this.reasons.clear();
    const t0 = performance.now();
    const lateMs = Math.max(0, t0 - this.pendingDue);
    if (this.running !== undefined) this.running.timing.interleaved++;
    let it: void | PassSlices = undefined;
    try {
      it = this.pass(why);
    } finally {
      if (it === undefined) {
        const ms = performance.now() - t0;
        this.finished(periodic, ms);
        this.o.onPass?.({ why, sliced: false, lateMs, slicesMs: [ms], wallMs: ms, interleaved: 0 });
      }
    }
    if (it === undefined) return;
    const busyMs = performance.now() - t0;
    const s: Sliced = { it, periodic, busyMs, t0, timing: { why, sliced: true, lateMs, slicesMs: [busyMs], wallMs: 0, interleaved: 0 } };
    if (this.running === undefined) {
      this.running = s;
      this.step();
    } else if (this.waiting === undefined) {
      this.waiting = s;
    } else {
      this.waiting.periodic ||= periodic;
      it.return?.();
    }
  }

  private stepSoon(): void {
    if (this.next === undefined && this.running !== undefined) this.next = setImmediate(() => { this.next = undefined; this.step(); });
  }

  /** Runs one slice of the running pass, unless a trigger is pending: its pass goes first and resumes the slices. */
  private step(): void {
    const s = this.running;
    if (s === undefined || this.stopped) return;
    if (this.pending !== undefined) {
      this.yielded = true;
      return;
    }
    const t0 = performance.now();
    let done = true;
    try {
      done = s.it.next().done === true;
    } finally {
      const t1 = performance.now();
      s.busyMs += t1 - t0;
      s.timing.slicesMs.push(t1 - t0);
      if (done) {
        this.running = this.waiting;
        this.waiting = undefined;
        this.finished(s.periodic, s.busyMs);
        s.timing.wallMs = t1 - s.t0;
        this.o.onPass?.(s.timing);
      }
      this.stepSoon();
    }
  }

  /** After a pass that held the loop `busyMs`: the next safety-net pass counts from its end. */
  private finished(periodic: boolean, busyMs: number): void {
    if (this.stopped) return;
    const wait = nextPeriodMs(this.o.periodMs, busyMs, this.o.maxDuty);
    if (periodic) this.schedule(wait);
    else if (wait > this.o.periodMs && this.timer !== undefined && performance.now() + wait > this.timerDue) this.schedule(wait);
  }

  /** Stops timers and drops slices not yet run (a slice in progress finishes). Idempotent. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.pending);
    if (this.next !== undefined) clearImmediate(this.next);
    this.timer = undefined;
    this.pending = undefined;
    this.next = undefined;
    const left = [this.running, this.waiting];
    this.running = undefined;
    this.waiting = undefined;
    for (const s of left) s?.it.return?.();
  }
}

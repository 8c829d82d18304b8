// The policy controller's safety net, kept off the event path (weftd's netns, the node's). Each
// periodic pass starts two jobs: the kernel's table is listed in a child process and taken as what
// the kernel holds (the next pass then repairs drift), and the incremental model is checked against
// a fresh match once no event arrived for a while: it takes tens of ms in all, run in slices
// (model-check.ts), and a check that an event made stale is given up and run again when quiet.

/** What the jobs need from the controller. */
export interface ResyncHooks {
  /** Lists the table asynchronously; false when a write raced the listing (applier.relist). */
  relist(): Promise<boolean>;
  /** Asks for a pass after a listing was taken (drift, if any, is repaired there); `ms` the listing took. */
  relisted(ms: number): void;
  /** The listing failed or kept racing writes: the next pass lists synchronously. */
  fallBack(why: string, error?: unknown): void;
  /** Runs the model check now; 'deferred' when a pass is due first (its table is not the model's yet) or an event came during it. */
  check(): CheckResult | Promise<CheckResult>;
  /** ms since the last event that changed the model. */
  quietFor(): number;
}

/** What a model check found. */
export type CheckResult = 'deferred' | 'equal' | 'differs';

/** Timing of the jobs (ms). */
export interface ResyncTiming {
  /** No model event for this long before the check runs. */
  quietMs: number;
  /** The check runs anyway once it waited this long (a cluster that never goes quiet). */
  maxDeferMs: number;
  /** Wait before listing again after a write raced the listing. */
  retryMs: number;
  /** Raced listings in a row before falling back to a synchronous one. */
  maxRaces: number;
}

/** Defaults: a check at the first 250 ms without events, at most 30 s late. */
export const RESYNC_TIMING: ResyncTiming = { quietMs: 250, maxDeferMs: 30_000, retryMs: 200, maxRaces: 5 };

/** Runs the re-list and the model check of each periodic pass (see the module comment). */
export class PolicyResync {
  private listing = false;
  private races = 0;
  private checkSince: number | undefined;
  private checking = false;
  private checkTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly h: ResyncHooks, private readonly t: ResyncTiming = RESYNC_TIMING) {}

  /** A periodic pass ran: start a listing (unless one runs) and make the model check due. */
  periodic(): void {
    if (this.stopped) return;
    this.startListing();
    this.checkSince ??= performance.now();
    this.armCheck(0);
  }

  /** True while a listing or the model check is outstanding (tests). */
  get busy(): boolean {
    return this.listing || this.retryTimer !== undefined || this.checkSince !== undefined || this.checking;
  }

  private startListing(): void {
    if (this.listing || this.retryTimer !== undefined) return;
    this.listing = true;
    const t0 = performance.now();
    let started: Promise<boolean>;
    try {
      started = this.h.relist();
    } catch (e) {
      this.listing = false;
      this.h.fallBack('list', e);
      return;
    }
    started.then((taken) => {
      this.listing = false;
      if (this.stopped) return;
      if (taken) {
        this.races = 0;
        this.h.relisted(performance.now() - t0);
      } else if (++this.races >= this.t.maxRaces) {
        this.races = 0;
        this.h.fallBack('raced');
      } else {
        this.retryTimer = setTimeout(() => { this.retryTimer = undefined; this.startListing(); }, this.t.retryMs);
        this.retryTimer.unref();
      }
    }, (e: unknown) => {
      this.listing = false;
      if (!this.stopped) this.h.fallBack('list', e);
    });
  }

  private armCheck(ms: number): void {
    if (this.checkTimer !== undefined || this.stopped) return;
    this.checkTimer = setTimeout(() => { this.checkTimer = undefined; this.tryCheck(); }, ms);
    this.checkTimer.unref();
  }

  private tryCheck(): void {
    if (this.checkSince === undefined || this.stopped || this.checking) return;
    const waited = performance.now() - this.checkSince;
    const quiet = this.h.quietFor();
    if (quiet < this.t.quietMs && waited < this.t.maxDeferMs) return this.armCheck(this.t.quietMs - quiet);
    this.checking = true;
    const done = (r: CheckResult): void => {
      this.checking = false;
      if (this.stopped) return;
      if (r === 'deferred') this.armCheck(this.t.quietMs);
      else this.checkSince = undefined;
    };
    const r = this.h.check();
    // A check that failed ran to its end as far as timing goes (the controller logs why).
    if (typeof r === 'string') done(r);
    else r.then(done, () => done('equal'));
  }

  /** Stops the timers; a listing in flight is ignored when it ends. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.checkTimer);
    clearTimeout(this.retryTimer);
    this.checkTimer = undefined;
    this.retryTimer = undefined;
  }
}

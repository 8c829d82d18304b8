import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ReconcileLoop, nextPeriodMs, type PassTiming } from '../../../../agent/reconcile/loop.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

void describe('ReconcileLoop', () => {
  it('coalesces a burst of triggers into one pass with every reason', async () => {
    const runs: string[] = [];
    const l = new ReconcileLoop((why) => { runs.push(why); }, { debounceMs: 20, periodMs: 60_000 });
    l.start();
    for (let i = 0; i < 50; i++) l.trigger(i % 2 ? 'netlink-delroute' : 'lease');
    await sleep(60);
    l.stop();
    assert.deepEqual(runs, ['lease,netlink-delroute']);
  });

  it('runs periodically and stops for good', async () => {
    let n = 0;
    const l = new ReconcileLoop(() => { n++; }, { debounceMs: 5, periodMs: 30 });
    l.start();
    for (let i = 0; i < 500 && n < 2; i++) await sleep(20);
    l.stop();
    const seen = n;
    assert.ok(seen >= 2, `ran ${seen} times`);
    l.trigger('late');
    await sleep(50);
    assert.equal(n, seen);
  });
});

void describe('nextPeriodMs', () => {
  it('a fixed period without maxDuty, and never below the period with it', () => {
    assert.equal(nextPeriodMs(1000, 400, undefined), 1000);
    assert.equal(nextPeriodMs(1000, 10, 0.05), 1000);
    assert.equal(nextPeriodMs(1000, 0, 0.05), 1000);
  });

  it('passes that take longer stretch the period to keep their share of time at maxDuty', () => {
    assert.equal(nextPeriodMs(1000, 150, 0.05), 3000);
    assert.equal(nextPeriodMs(1000, 600, 0.05), 12_000);
  });
});

void describe('ReconcileLoop with maxDuty', () => {
  it('a slow periodic pass pushes the next one out', async () => {
    const at: number[] = [];
    const busy = (ms: number) => { const end = performance.now() + ms; while (performance.now() < end) { /* a slow pass */ } };
    const l = new ReconcileLoop((why) => { if (why === 'periodic') { at.push(performance.now()); busy(40); } }, { debounceMs: 1, periodMs: 10, maxDuty: 0.1 });
    l.start();
    for (let i = 0; i < 500 && at.length < 2; i++) await sleep(20);
    l.stop();
    // A fixed 10 ms period would start the next pass 50 ms after this one; 40 ms at 10 % wait 400 ms more.
    assert.equal(at.length, 2);
    assert.ok((at[1] ?? 0) - (at[0] ?? 0) >= 440, `periodic passes at ${at.map((t) => t.toFixed(0)).join(', ')}`);
  });
});

const busy = (ms: number) => { const end = performance.now() + ms; while (performance.now() < end) { /* a slow slice */ } };

/** A sliced pass named `name`: `n` slices of `ms` each, logged as name0, name1, ... (name-start when its body begins). */
function* slices(log: string[], name: string, n: number, ms: number, during: (i: number) => void = () => undefined): Generator<void, void, undefined> {
  log.push(`${name}-start`);
  for (let i = 0; i < n; i++) {
    busy(ms);
    log.push(`${name}${i}`);
    during(i);
    if (i < n - 1) yield;
  }
}

void describe('ReconcileLoop with sliced passes', () => {
  it('a trigger during a sliced pass runs its pass between two slices, not after the whole pass', async () => {
    const log: string[] = [];
    const l: ReconcileLoop = new ReconcileLoop((why) => {
      if (why === 'lease') { log.push('lease'); return; }
      return slices(log, 'full', 4, 5, (i) => { if (i === 0) l.trigger('lease', 0); });
    }, { debounceMs: 1, periodMs: 60_000 });
    l.start();
    l.trigger('netlink-delroute', 0);
    for (let i = 0; i < 100 && !log.includes('full3'); i++) await sleep(5);
    l.stop();
    assert.deepEqual(log, ['full-start', 'full0', 'lease', 'full1', 'full2', 'full3']);
  });

  it('a sliced pass returned while one runs waits for it; a third is dropped unstarted', async () => {
    const log: string[] = [];
    const l: ReconcileLoop = new ReconcileLoop((why) => slices(log, why, 3, 1, (i) => {
      if (why === 'a' && i === 0) l.trigger('b', 0);
      if (why === 'a' && i === 1) l.trigger('c', 0);
    }), { debounceMs: 1, periodMs: 60_000 });
    l.start();
    l.trigger('a', 0);
    for (let i = 0; i < 100 && !log.includes('b2'); i++) await sleep(5);
    await sleep(20);
    l.stop();
    assert.deepEqual(log, ['a-start', 'a0', 'a1', 'a2', 'b-start', 'b0', 'b1', 'b2']);
  });

  it('stop() drops the slices left and closes the pass (its finally runs)', async () => {
    const log: string[] = [];
    const l = new ReconcileLoop(function* () {
      try {
        log.push('s0');
        yield;
        log.push('s1');
        yield;
        log.push('s2');
      } finally {
        log.push('closed');
      }
    }, { debounceMs: 1, periodMs: 60_000 });
    l.start();
    l.trigger('x', 0);
    for (let i = 0; i < 100 && !log.includes('s0'); i++) await sleep(1);
    l.stop();
    await sleep(20);
    assert.equal(log[0], 's0');
    assert.ok(log.includes('closed'), log.join(','));
    assert.ok(!log.includes('s2'), log.join(','));
  });
});

void describe('ReconcileLoop: any long pass stretches the safety net', () => {
  it('a slow pass triggered by an event pushes the next periodic pass out', async () => {
    const periodic: number[] = [];
    const l = new ReconcileLoop((why) => {
      if (why === 'periodic') { periodic.push(performance.now()); return; }
      busy(40);
    }, { debounceMs: 1, periodMs: 50, maxDuty: 0.1 });
    l.start();
    const t0 = performance.now();
    l.trigger('netlink-delroute', 0);
    for (let i = 0; i < 100 && periodic.length < 1; i++) await sleep(10);
    l.stop();
    // The period alone would run it 50 ms after start; 40 ms of pass at 10 % waits 400 ms from its end.
    assert.ok((periodic[0] ?? 0) - t0 >= 430, `first periodic pass ${((periodic[0] ?? 0) - t0).toFixed(0)} ms after start`);
  });

  it('the slices of a sliced periodic pass add up: 3 x 20 ms at 10 % wait 600 ms', async () => {
    const at: Array<{ start: number; end: number }> = [];
    const l = new ReconcileLoop(function* () {
      const start = performance.now();
      for (let i = 0; i < 3; i++) { busy(20); if (i < 2) yield; }
      at.push({ start, end: performance.now() });
    }, { debounceMs: 1, periodMs: 10, maxDuty: 0.1 });
    l.start();
    for (let i = 0; i < 300 && at.length < 2; i++) await sleep(10);
    l.stop();
    assert.equal(at.length, 2);
    const gap = (at[1]?.start ?? 0) - (at[0]?.end ?? 0);
    assert.ok(gap >= 590, `next periodic pass ${gap.toFixed(0)} ms after the end of one`);
  });

  it('short passes, however frequent, never hold the safety net back', async () => {
    let periodic = 0;
    const l = new ReconcileLoop((why) => { if (why.includes('periodic')) periodic++; }, { debounceMs: 1, periodMs: 60, maxDuty: 0.05 });
    l.start();
    for (let i = 0; i < 30; i++) { l.trigger('lease', 0); await sleep(10); }
    l.stop();
    assert.ok(periodic >= 2, `${periodic} periodic passes in 300 ms of joins`);
  });
});

void describe('ReconcileLoop: pass timings (onPass)', () => {
  it('reports each slice, the passes run between them and how late a trigger behind a busy loop fired', async () => {
    const seen: PassTiming[] = [];
    const log: string[] = [];
    const l: ReconcileLoop = new ReconcileLoop((why) => {
      if (why === 'lease') return;
      return slices(log, 'full', 3, 15, (i) => { if (i === 0) l.trigger('lease', 0); });
    }, { debounceMs: 1, periodMs: 60_000, onPass: (t) => seen.push(t) });
    l.start();
    l.trigger('netlink-delroute', 0);
    setTimeout(() => busy(30), 0);
    for (let i = 0; i < 100 && seen.length < 2; i++) await sleep(5);
    l.stop();
    const join = seen.find((t) => t.why === 'lease');
    const full = seen.find((t) => t.why === 'netlink-delroute');
    assert.ok(join !== undefined && full !== undefined, JSON.stringify(seen));
    assert.equal(join.sliced, false);
    assert.equal(join.slicesMs.length, 1);
    assert.equal(full.sliced, true);
    // The pass's own call (creating the slices, here nearly free), then the three slices.
    assert.equal(full.slicesMs.length, 4);
    assert.ok(full.slicesMs.slice(1).every((ms) => ms >= 14), JSON.stringify(full));
    assert.equal(full.interleaved, 1);
    assert.ok(full.wallMs >= full.slicesMs.reduce((a, b) => a + b, 0), JSON.stringify(full));
    // The 30 ms busy timer queued beside the first trigger delays it or the join's.
    assert.ok(Math.max(full.lateMs, join.lateMs) >= 14, JSON.stringify(seen));
  });
});

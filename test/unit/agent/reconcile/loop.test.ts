import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ReconcileLoop, nextPeriodMs } from '../../../../agent/reconcile/loop.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

void describe('ReconcileLoop', () => {
  it('coalesces a burst of triggers into one pass with every reason', async () => {
    const runs: string[] = [];
    const l = new ReconcileLoop((why) => runs.push(why), { debounceMs: 20, periodMs: 60_000 });
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

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ReconcileLoop } from '../../../../agent/reconcile/loop.ts';

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
    await sleep(110);
    l.stop();
    const seen = n;
    assert.ok(seen >= 2, `ran ${seen} times`);
    l.trigger('late');
    await sleep(50);
    assert.equal(n, seen);
  });
});

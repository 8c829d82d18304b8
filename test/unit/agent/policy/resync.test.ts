// PolicyResync (agent/policy/resync.ts): the background listing is taken or retried when raced, falls
// back to a synchronous one, and the model check waits for a quiet moment (bounded by maxDeferMs).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PolicyResync, type ResyncHooks, type ResyncTiming } from '../../../../agent/policy/resync.ts';

const T: ResyncTiming = { quietMs: 30, maxDeferMs: 400, retryMs: 5, maxRaces: 3 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Hooks that record calls; `listings` answers each relist in turn (true taken, false raced, Error rejected). */
function hooks(listings: (boolean | Error)[], check: () => 'deferred' | 'equal' | 'differs' = () => 'equal') {
  const calls: string[] = [];
  let lastEvent = performance.now() - 1000;
  const h: ResyncHooks = {
    relist: () => {
      calls.push('relist');
      const x = listings.shift() ?? true;
      return x instanceof Error ? Promise.reject(x) : Promise.resolve(x);
    },
    relisted: () => calls.push('relisted'),
    fallBack: (why, e) => calls.push(`fallBack:${why}${e !== undefined ? ':error' : ''}`),
    check: () => {
      const r = check();
      calls.push(`check:${r}`);
      return r;
    },
    quietFor: () => performance.now() - lastEvent,
  };
  return { h, calls, event: () => { lastEvent = performance.now(); } };
}

async function until(cond: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(2);
  }
}

void describe('PolicyResync', () => {
  it('takes a listing and checks the model once quiet', async () => {
    const { h, calls } = hooks([true]);
    const r = new PolicyResync(h, T);
    r.periodic();
    await until(() => !r.busy);
    assert.deepEqual(calls, ['relist', 'relisted', 'check:equal']);
    r.stop();
  });

  it('lists again after a raced listing, and falls back to a synchronous one after maxRaces', async () => {
    const a = hooks([false, true]);
    const r1 = new PolicyResync(a.h, T);
    r1.periodic();
    await until(() => !r1.busy);
    assert.deepEqual(a.calls.filter((c) => !c.startsWith('check')), ['relist', 'relist', 'relisted']);
    r1.stop();
    const b = hooks([false, false, false, true]);
    const r2 = new PolicyResync(b.h, T);
    r2.periodic();
    await until(() => !r2.busy);
    assert.deepEqual(b.calls.filter((c) => !c.startsWith('check')), ['relist', 'relist', 'relist', 'fallBack:raced']);
    r2.stop();
  });

  it('a failed listing falls back with its error', async () => {
    const { h, calls } = hooks([new Error('nft gone')]);
    const r = new PolicyResync(h, T);
    r.periodic();
    await until(() => !r.busy);
    assert.ok(calls.includes('fallBack:list:error'), calls.join());
    r.stop();
  });

  it('the model check waits while events arrive, and runs once they stop', async () => {
    const x = hooks([true]);
    const r = new PolicyResync(x.h, T);
    x.event();
    r.periodic();
    const t0 = performance.now();
    while (performance.now() - t0 < 100) {
      x.event();
      await sleep(5);
    }
    assert.equal(x.calls.filter((c) => c.startsWith('check')).length, 0, 'no check while events arrive');
    await until(() => !r.busy);
    assert.ok(performance.now() - t0 >= 100 + T.quietMs - 5);
    assert.deepEqual(x.calls.filter((c) => c.startsWith('check')), ['check:equal']);
    r.stop();
  });

  it('a cluster that never goes quiet is checked after maxDeferMs; a deferred check is tried again', async () => {
    let answers = ['deferred', 'equal'] as ('deferred' | 'equal')[];
    const x = hooks([true], () => answers.shift() ?? 'equal');
    const r = new PolicyResync(x.h, { ...T, maxDeferMs: 80 });
    r.periodic();
    const t0 = performance.now();
    while (r.busy && performance.now() - t0 < 2000) {
      x.event();
      await sleep(5);
    }
    assert.equal(r.busy, false);
    assert.deepEqual(x.calls.filter((c) => c.startsWith('check')), ['check:deferred', 'check:equal']);
    answers = [];
    r.stop();
  });

  it('does nothing after stop', async () => {
    const { h, calls } = hooks([true]);
    const r = new PolicyResync(h, T);
    r.stop();
    r.periodic();
    await sleep(T.quietMs * 2);
    assert.deepEqual(calls, []);
  });
});

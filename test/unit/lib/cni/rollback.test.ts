// The rollback stack every plugin's ADD unwinds on failure: newest first, past failing undos, the
// original error rethrown; the synchronous form for sync plugins and work inside a netns. No root.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rollback } from '../../../../lib/cni/rollback.ts';

test('run: undo actions newest first, keeps going past a failing one, rethrows the original error', async () => {
  const order: string[] = [];
  const boom = new Error('step failed');
  await assert.rejects(
    new Rollback().run(async (rb) => {
      rb.push('a', () => { order.push('a'); });
      rb.push('b', () => { throw new Error('undo b failed'); });
      rb.push('c', async () => { order.push('c'); });
      await Promise.resolve();
      throw boom;
    }),
    (e) => e === boom,
  );
  assert.deepEqual(order, ['c', 'a']);
});

test('runSync: same order and error; a success keeps every change; an async undo counts as failed', () => {
  const order: string[] = [];
  const boom = new Error('step failed');
  const rb = new Rollback();
  assert.throws(() => rb.runSync((r) => {
    r.push('a', () => { order.push('a'); });
    r.push('async', async () => { order.push('async'); });
    r.push('b', () => { throw new Error('undo b failed'); });
    r.push('c', () => { order.push('c'); });
    throw boom;
  }), (e) => e === boom);
  assert.deepEqual(order, ['c', 'async', 'a'], 'the async undo started, the rest still ran');
  assert.equal(rb.size, 0);
  const kept: string[] = [];
  assert.equal(new Rollback().runSync((r) => { r.push('x', () => { kept.push('x'); }); return 7; }), 7);
  assert.deepEqual(kept, [], 'nothing undone after success');
});

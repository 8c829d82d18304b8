import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LeaseChanges } from '../../../../agent/reconcile/changes.ts';

/** A tracker past its first (always full) pass. */
function started(): LeaseChanges {
  const c = new LeaseChanges();
  assert.deepEqual(c.take('start'), { full: true });
  return c;
}

void describe('LeaseChanges', () => {
  it('the first pass is full whatever triggers it', () => {
    const c = new LeaseChanges();
    c.note('10.0.4.0/24', 'new');
    assert.deepEqual(c.take('lease'), { full: true });
  });

  it('peers that only joined, triggered by lease events alone: just those subnets', () => {
    const c = started();
    c.note('10.0.4.0/24', 'new');
    c.note('10.0.5.0/24', 'new');
    assert.deepEqual(c.take('lease'), { full: false, joined: ['10.0.4.0/24', '10.0.5.0/24'] });
    assert.deepEqual(c.take('lease'), { full: false, joined: [] }, 'changes are forgotten once taken');
  });

  it('a replaced or removed lease makes the pass full, also when it was new first', () => {
    const c = started();
    c.note('10.0.4.0/24', 'new');
    c.note('10.0.4.0/24', 'other');
    c.note('10.0.4.0/24', 'new');
    assert.deepEqual(c.take('lease'), { full: true });
    c.note('10.0.6.0/24', 'new');
    assert.deepEqual(c.take('lease'), { full: false, joined: ['10.0.6.0/24'] });
  });

  it('any other trigger merged in (netlink, periodic, own lease) makes the pass full, the joined peers programmed first', () => {
    const c = started();
    c.note('10.0.4.0/24', 'new');
    assert.deepEqual(c.take('lease,netlink-delroute'), { full: true, first: ['10.0.4.0/24'] });
    assert.deepEqual(c.take('periodic'), { full: true });
    c.note('10.0.5.0/24', 'new');
    c.note('10.0.6.0/24', 'other');
    assert.deepEqual(c.take('lease,periodic'), { full: true }, 'not when a lease was replaced or removed');
    c.requireFull();
    c.note('10.0.7.0/24', 'new');
    assert.deepEqual(c.take('lease,periodic'), { full: true }, 'nor when a full pass is required anyway');
  });

  it('requireFull holds until one full pass ran', () => {
    const c = started();
    c.requireFull();
    assert.equal(c.fullRequired, true);
    c.note('10.0.4.0/24', 'new');
    assert.deepEqual(c.take('lease'), { full: true });
    assert.equal(c.fullRequired, false);
    c.note('10.0.7.0/24', 'new');
    assert.deepEqual(c.take('lease'), { full: false, joined: ['10.0.7.0/24'] });
  });
});

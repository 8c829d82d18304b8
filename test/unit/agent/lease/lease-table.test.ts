// The lease table: diffs, de-duplicated renewals, revisions and replay.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LeaseTable } from '../../../../agent/lease/lease-table.ts';
import type { Lease, LeaseEvent } from '../../../../agent/lease/store.ts';

const l = (subnet: string, ip = '10.0.0.1', exp = 1): Lease => ({ subnet, publicIp: ip, backendType: 'vxlan', backendData: { VNI: 1 }, expiration: exp });

void describe('LeaseTable', () => {
  void it('turns snapshots into added/removed diffs and ignores pure renewals', () => {
    const t = new LeaseTable();
    const seen: string[] = [];
    t.watch(0, (ev) => seen.push(`${ev.type} ${ev.lease.subnet} ${ev.lease.publicIp}`));
    t.applySnapshot([l('10.1.1.0/24'), l('10.1.2.0/24')]);
    t.applySnapshot([l('10.1.1.0/24', '10.0.0.1', 99), l('10.1.2.0/24', '10.0.0.9')]);
    t.applySnapshot([l('10.1.2.0/24', '10.0.0.9')]);
    assert.deepEqual(seen, ['added 10.1.1.0/24 10.0.0.1', 'added 10.1.2.0/24 10.0.0.1', 'added 10.1.2.0/24 10.0.0.9', 'removed 10.1.1.0/24 10.0.0.1']);
    assert.equal(t.revision, 4);
  });

  void it('replays history after a revision, then streams', () => {
    const t = new LeaseTable();
    t.applySnapshot([l('10.1.1.0/24')], 100);
    const { revision } = t.snapshot();
    t.apply({ type: 'added', lease: l('10.1.2.0/24') }, 105);
    t.apply({ type: 'removed', lease: l('10.1.9.0/24') }, 106); // unknown: no event
    const got: LeaseEvent[] = [];
    const w = t.watch(revision, (ev) => got.push(ev));
    t.apply({ type: 'removed', lease: l('10.1.1.0/24') }, 107);
    w.stop();
    t.apply({ type: 'removed', lease: l('10.1.2.0/24') }, 108);
    assert.deepEqual(got.map((e) => `${e.type} ${e.lease.subnet}`), ['added 10.1.2.0/24', 'removed 10.1.1.0/24']);
    t.apply({ type: 'added', lease: l('10.1.3.0/24') }, 2); // revision going back (etcd wiped): stays monotonic
    assert.equal(t.revision, 109);
  });

  void it('replays one change per subnet however many events happened (churn does not grow the table)', () => {
    const t = new LeaseTable();
    t.applySnapshot([l('10.1.1.0/24')]);
    const { revision } = t.snapshot();
    for (let i = 0; i < 10_000; i++) {
      const s = `10.1.${2 + (i % 3)}.0/24`;
      t.apply({ type: 'added', lease: l(s, `10.0.0.${1 + (i % 7)}`) });
      t.apply({ type: 'removed', lease: l(s) });
    }
    t.apply({ type: 'added', lease: l('10.1.3.0/24', '10.0.0.42') });
    t.apply({ type: 'removed', lease: l('10.1.1.0/24') });
    assert.equal(t.revision, revision + 20_002);
    const got: string[] = [];
    t.watch(revision, (ev) => got.push(`${ev.type} ${ev.lease.subnet} ${ev.lease.publicIp}`));
    // The last change of each subnet, oldest first.
    assert.deepEqual(got, ['removed 10.1.4.0/24 10.0.0.3', 'removed 10.1.2.0/24 10.0.0.4', 'added 10.1.3.0/24 10.0.0.42', 'removed 10.1.1.0/24 10.0.0.1']);
  });
});

// The lease table: diffs, de-duplicated renewals, revisions and replay.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LeaseTable } from '../../../../agent/lease/lease-table.ts';
import type { Lease, LeaseEvent } from '../../../../agent/lease/store.ts';

const l = (subnet: string, ip = '10.0.0.1', exp = 1): Lease => ({ subnet, publicIp: ip, backendType: 'vxlan', backendData: { VNI: 1 }, expiration: exp });

void describe('LeaseTable', () => {
  void it('keeps IPv6-only leases apart (all share the IPv4 side 0.0.0.0/0): keyed by their IPv6 subnet', () => {
    const v6 = (ipv6Subnet: string, publicIpv6: string): Lease => ({ subnet: '0.0.0.0/0', ipv6Subnet, publicIp: '0.0.0.0', publicIpv6, backendType: 'vxlan', backendData: {}, expiration: 1 });
    const t = new LeaseTable();
    const seen: string[] = [];
    t.watch(0, (ev) => seen.push(`${ev.type} ${ev.lease.ipv6Subnet ?? ''}`));
    t.applySnapshot([v6('fd00:1::/64', 'fd00::1'), v6('fd00:2::/64', 'fd00::2'), v6('fd00:3::/64', 'fd00::3')]);
    assert.equal(t.snapshot().leases.length, 3);
    t.apply({ type: 'removed', lease: v6('fd00:2::/64', '') });
    assert.deepEqual(t.snapshot().leases.map((x) => x.ipv6Subnet), ['fd00:1::/64', 'fd00:3::/64']);
    assert.equal(t.get('fd00:3::/64')?.publicIpv6, 'fd00::3');
    assert.deepEqual(seen, ['added fd00:1::/64', 'added fd00:2::/64', 'added fd00:3::/64', 'removed fd00:2::/64']);
  });

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

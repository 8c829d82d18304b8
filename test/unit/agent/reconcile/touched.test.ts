import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TouchedPeers } from '../../../../agent/reconcile/touched.ts';
import type { Op, Plan } from '../../../../agent/reconcile/diff.ts';
import type { Lease } from '../../../../agent/lease/store.ts';

const lease = (n: number, mac: string, v6 = false): Lease => ({
  subnet: `10.244.${n}.0/24`, publicIp: `192.0.2.${n}`, backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: mac }, expiration: 0,
  ...(v6 ? { ipv6Subnet: `fd00:10:244:${n}::/64`, publicIpv6: `2001:db8::${n}`, backendV6Data: { VNI: 1, VtepMAC: mac.replace(/^0e/, '0f') } } : {}),
});
const route = (dst: string) => ({ family: 4 as const, dst, gw: '10.244.9.0', oif: 5, onlink: true, scope: 0, table: 254, protocol: 87, type: 1, flags: 0, extra: [] });
/** Every kind of operation on peer n (subnet 10.244.n.0/24, MAC ...:0n). */
function opsOf(n: number, mac: string): Op[] {
  return [
    { kind: 'add-route', want: { dst: `10.244.${n}.0/24`, gw: `10.244.${n}.0`, dev: 'vtep', onlink: true }, replace: false },
    { kind: 'del-route', route: route(`10.244.${n}.0/24`) },
    { kind: 'add-neigh', want: { ip: `10.244.${n}.0`, mac }, replace: false },
    { kind: 'del-neigh', neigh: { family: 4, index: 5, ip: `10.244.${n}.0`, mac, state: 0x80, permanent: true, flags: 0, extra: [] } },
    { kind: 'add-fdb', want: { mac, dst: `192.0.2.${n}` }, replace: true },
    { kind: 'del-fdb', fdb: { index: 5, mac, dst: `192.0.2.${n}`, state: 0x80, permanent: true, flags: 2, self: true, extra: [] } },
  ];
}
const plan = (ops: Op[]): Plan => ({ ops, conflicts: [{ dst: '10.244.2.0/24', protocol: 4 }, { dst: '10.244.3.0/24', protocol: 4 }], adopted: [{ dst: '10.244.2.0/24', gw: '10.244.2.0', protocol: 3 }], inPlace: 7 });

void describe('TouchedPeers', () => {
  it('nothing touched: the plan is returned as it is', () => {
    const p = plan(opsOf(2, '0e:00:00:00:00:02'));
    assert.equal(new TouchedPeers().filter(p), p);
  });

  it('drops every kind of operation, conflict and adoption on a touched peer and keeps the others', () => {
    const t = new TouchedPeers();
    t.add(lease(2, '0E:00:00:00:00:02'));
    const keep = opsOf(3, '0e:00:00:00:00:03');
    const out = t.filter(plan([...opsOf(2, '0e:00:00:00:00:02'), ...keep]));
    assert.deepEqual(out.ops, keep);
    assert.deepEqual(out.conflicts, [{ dst: '10.244.3.0/24', protocol: 4 }]);
    assert.deepEqual(out.adopted, []);
    assert.equal(out.inPlace, 7);
  });

  it('a subnet written with host bits still names its network-form entries; the IPv6 side is recorded too', () => {
    const t = new TouchedPeers();
    t.add({ ...lease(4, '0e:00:00:00:00:04', true), subnet: '10.244.4.1/24' });
    const v6: Op[] = [
      { kind: 'add-route', want: { dst: 'fd00:10:244:4::/64', gw: 'fd00:10:244:4::', dev: 'vtep', onlink: true }, replace: false },
      { kind: 'add-neigh', want: { ip: 'fd00:10:244:4::', mac: '0f:00:00:00:00:04' }, replace: false },
      { kind: 'add-fdb', want: { mac: '0f:00:00:00:00:04', dst: '2001:db8::4' }, replace: false },
    ];
    assert.deepEqual(t.filter(plan([...opsOf(4, '0e:00:00:00:00:04'), ...v6])).ops, []);
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { adoptableMac, type AdoptWant } from '../../../../agent/backend/vxlan-adopt.ts';
import type { Link } from '../../../../lib/netlink/index.ts';

const want: AdoptWant = { vni: 1, port: 8472, local: '192.0.2.11', uplinkIndex: 2, network: '10.244.0.0/16' };
const flannels = (o: Partial<Link> = {}, x: Partial<NonNullable<Link['vxlan']>> = {}): Link => ({
  index: 7, name: 'flannel.1', kind: 'vxlan', mac: 'C6:D2:32:6F:8F:44', mtu: 1450, up: true, type: 1, operState: 'unknown', flags: 0, extra: [],
  vxlan: { vni: 1, port: 8472, local: '192.0.2.11', devIndex: 2, learning: false, ...x }, ...o,
});

void describe('adoptableMac', () => {
  it('flanneld\'s VTEP with our parameters and its lease address: its MAC, lower case', () => {
    assert.equal(adoptableMac(flannels(), ['10.244.3.0/32'], want), 'c6:d2:32:6f:8f:44');
  });

  it('a device weftd would re-create is not adopted (VNI, port, local, underlay, learning)', () => {
    for (const x of [{ vni: 2 }, { port: 4789 }, { local: '192.0.2.99' }, { devIndex: 9 }, { learning: true }]) {
      assert.equal(adoptableMac(flannels({}, x), ['10.244.3.0/32'], want), null, JSON.stringify(x));
    }
  });

  it('no address, or one outside the cluster network (another cluster\'s device): not adopted', () => {
    assert.equal(adoptableMac(flannels(), [], want), null);
    assert.equal(adoptableMac(flannels(), ['10.99.3.0/32'], want), null);
    assert.equal(adoptableMac(flannels(), ['10.244.3.0/32', '172.16.0.1/32'], want), null);
  });

  it('not vxlan, absent, or a multicast MAC: null', () => {
    assert.equal(adoptableMac(null, ['10.244.3.0/32'], want), null);
    assert.equal(adoptableMac(flannels({ kind: 'bridge' }), ['10.244.3.0/32'], want), null);
    assert.equal(adoptableMac(flannels({ mac: '01:00:5e:00:00:01' }), ['10.244.3.0/32'], want), null);
  });

  it('IPv6: flannel-v6.<VNI> with its /128 in IPv6Network', () => {
    const w6: AdoptWant = { ...want, local: '2001:db8::11', network: 'fd00:10:244::/48' };
    const l6 = flannels({ name: 'flannel-v6.1' }, { local: '2001:db8::11' });
    assert.equal(adoptableMac(l6, ['fd00:10:244:3::/128'], w6), 'c6:d2:32:6f:8f:44');
    assert.equal(adoptableMac(l6, ['10.244.3.0/32'], w6), null);
  });
});

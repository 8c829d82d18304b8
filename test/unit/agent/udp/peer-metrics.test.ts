// The udp forwarder's table on /metrics: one weftd_udp_forwarder_entry series per lease (rebuilt on
// each scrape, so a lease gone is a series gone) and the count; the lease filter weftd and doctor share.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Metrics } from '../../../../agent/metrics.ts';
import { defineUdpMetrics, exportUdpPeers } from '../../../../agent/udp/counters.ts';
import { PeerTable, udpPeerLeases } from '../../../../agent/udp/peer-table.ts';
import type { Lease } from '../../../../agent/lease/store.ts';

const lease = (subnet: string, publicIp: string, backendType = 'udp'): Lease => ({ subnet, publicIp, backendType, backendData: {}, expiration: 0 });

void describe('forwarder entries on /metrics', () => {
  it('PeerTable.rows gives each lease back in network form, longest prefix first', () => {
    const t = new PeerTable([lease('10.244.1.0/24', '192.0.2.11'), lease('10.244.2.0/25', '192.0.2.12'), lease('bad', '192.0.2.13')], '10.244.1.0/24');
    assert.deepEqual(t.rows(), [{ subnet: '10.244.2.0/25', publicIp: '192.0.2.12' }, { subnet: '10.244.1.0/24', publicIp: '192.0.2.11' }]);
  });

  it('udpPeerLeases takes udp and typeless (flanneld) leases and the own one, not vxlan peers', () => {
    const own = lease('10.244.1.0/24', '192.0.2.11', 'vxlan');
    const got = udpPeerLeases([own, lease('10.244.2.0/24', '192.0.2.12'), lease('10.244.3.0/24', '192.0.2.13', ''), lease('10.244.4.0/24', '192.0.2.14', 'vxlan')], own.subnet);
    assert.deepEqual(got.map((l) => l.subnet), ['10.244.1.0/24', '10.244.2.0/24', '10.244.3.0/24']);
  });

  it('exportUdpPeers replaces the series: a lease gone leaves no sample behind', () => {
    const m = new Metrics();
    defineUdpMetrics(m);
    exportUdpPeers(m, [{ subnet: '10.244.1.0/24', publicIp: '192.0.2.11' }, { subnet: '10.244.2.0/24', publicIp: '192.0.2.12' }]);
    let text = m.format();
    assert.match(text, /^weftd_udp_forwarder_entry\{public_ip="192\.0\.2\.12",subnet="10\.244\.2\.0\/24"\} 1$/m);
    assert.match(text, /^weftd_udp_forwarder_entries 2$/m);
    exportUdpPeers(m, [{ subnet: '10.244.1.0/24', publicIp: '192.0.2.11' }]);
    text = m.format();
    assert.doesNotMatch(text, /10\.244\.2\.0/);
    assert.match(text, /^weftd_udp_forwarder_entries 1$/m);
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { conntrackArgs, staleUdpEndpoints } from '../../../../agent/services/conntrack.ts';
import { serviceUnits } from '../../../../agent/services/model.ts';
import { NODE, ep, port, slice, svc } from './fixtures.ts';

const DNS = svc('dns', { type: 'NodePort', clusterIPs: ['10.96.0.10', 'fd00:96::10'], externalIPs: ['192.0.2.5'], ports: [port('dns', 53, { protocol: 'UDP', nodePort: 30053 }), port('tcp', 53)] });
const units = (ips: string[]) => serviceUnits(DNS, [slice('a', 'dns', ips.map((i) => ep(i)), [{ name: 'dns', port: 5353, protocol: 'UDP' }, { name: 'tcp', port: 5353 }])], NODE);

void describe('services stale UDP conntrack', () => {
  it('an endpoint leaving a UDP port: its entries by ClusterIP, external address and NodePort; TCP ports untouched', () => {
    const stale = staleUdpEndpoints(units(['10.244.1.1', '10.244.2.2']), units(['10.244.2.2']));
    assert.deepEqual(stale, [{ family: 4, addrs: ['10.96.0.10', '192.0.2.5'], port: 53, nodePort: 30053, endpoint: '10.244.1.1' }]);
    assert.deepEqual(conntrackArgs(stale[0]!), [
      ['-D', '-p', 'udp', '--orig-dst', '10.96.0.10', '--orig-port-dst', '53', '--reply-src', '10.244.1.1'],
      ['-D', '-p', 'udp', '--orig-dst', '192.0.2.5', '--orig-port-dst', '53', '--reply-src', '10.244.1.1'],
      ['-D', '-p', 'udp', '--orig-port-dst', '30053', '--reply-src', '10.244.1.1'],
    ]);
    assert.deepEqual(staleUdpEndpoints(units(['10.244.1.1']), units(['10.244.1.1', '10.244.3.3'])), []);
  });

  it('a UDP port gaining its first endpoints: every entry to its addresses (datagrams sent before were never translated)', () => {
    const gained = staleUdpEndpoints(units([]), units(['10.244.1.1']));
    assert.deepEqual(gained, [{ family: 4, addrs: ['10.96.0.10', '192.0.2.5'], port: 53, nodePort: 30053 }]);
    assert.deepEqual(conntrackArgs(gained[0]!), [
      ['-D', '-p', 'udp', '--orig-dst', '10.96.0.10', '--orig-port-dst', '53'],
      ['-D', '-p', 'udp', '--orig-dst', '192.0.2.5', '--orig-port-dst', '53'],
    ]);
    assert.equal(staleUdpEndpoints([], units(['10.244.1.1'])).length, 1, 'a new Service too');
  });

  it('a Service gone: every UDP endpoint of it; IPv6 entries with -f ipv6', () => {
    const v6 = serviceUnits(DNS, [slice('b', 'dns', [ep('fd00:244::7')], [{ name: 'dns', port: 5353, protocol: 'UDP' }], 'IPv6')], NODE);
    const stale = staleUdpEndpoints(v6, []).filter((x) => x.endpoint !== undefined);
    assert.equal(stale.length, 1);
    assert.deepEqual(conntrackArgs(stale[0]!)[0], ['-D', '-f', 'ipv6', '-p', 'udp', '--orig-dst', 'fd00:96::10', '--orig-port-dst', '53', '--reply-src', 'fd00:244::7']);
  });
});

// doctor's udp peers check: the forwarder entries weftd exports against the leases it must take.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseNetConf, type Lease } from '../../../../agent/inspect.ts';
import { checkUdp, compareForwarder, forwarderEntries } from '../../../../cli/doctor/check-udp.ts';
import { parseMetrics } from '../../../../cli/doctor/check-health.ts';
import { UPLINK, healthyNode, link, route } from './fixtures.ts';

const NET = parseNetConf('{"Network":"10.244.0.0/16","Backend":{"Type":"udp"}}');
const lease = (subnet: string, publicIp: string, backendType = 'udp'): Lease => ({ subnet, publicIp, backendType, backendData: {}, expiration: 0 });
const OWN = lease('10.244.1.0/24', '192.0.2.11');
const PEER = lease('10.244.2.0/24', '192.0.2.12');

function udpNode(): ReturnType<typeof healthyNode> {
  const n = healthyNode();
  n.links.push(link(9, 'flannel0', 1472, { kind: 'tun' }));
  n.routes.push(route('10.244.0.0/16', undefined, 9, 4));
  return n;
}

const metricsText = (rows: string[]): Map<string, number> => parseMetrics([`weftd_udp_forwarder_entries ${rows.length}`, ...rows.map((r) => `weftd_udp_forwarder_entry{${r}} 1`)].join('\n'));

describe('udp forwarder entries', () => {
  test('forwarderEntries reads the series; none exported is null', () => {
    assert.deepEqual(forwarderEntries(metricsText(['public_ip="192.0.2.12",subnet="10.244.2.0/24"'])), [{ subnet: '10.244.2.0/24', publicIp: '192.0.2.12' }]);
    assert.equal(forwarderEntries(parseMetrics('weftd_leases 2\n')), null);
  });

  test('compareForwarder names missing, drifted and stale entries', () => {
    const want = [{ subnet: '10.244.1.0/24', publicIp: '192.0.2.11' }, { subnet: '10.244.2.0/24', publicIp: '192.0.2.12' }, { subnet: '10.244.3.0/24', publicIp: '192.0.2.13' }];
    const have = [{ subnet: '10.244.1.0/24', publicIp: '192.0.2.11' }, { subnet: '10.244.2.0/24', publicIp: '192.0.2.99' }, { subnet: '10.244.9.0/24', publicIp: '192.0.2.19' }];
    assert.deepEqual(compareForwarder(want, have).map((p) => p.detail.split(' (')[0]), [
      'forwarder entry drifted: 10.244.2.0/24 goes to 192.0.2.99, but its lease says 192.0.2.12',
      'forwarder entry missing: 10.244.3.0/24 should go to 192.0.2.13',
      'stale forwarder entry: 10.244.9.0/24 -> 192.0.2.19 matches no lease',
    ]);
    assert.deepEqual(compareForwarder(want, want), []);
  });

  test('checkUdp: clean when the forwarder has every lease; without metrics, only the kernel side', () => {
    const rows = ['public_ip="192.0.2.11",subnet="10.244.1.0/24"', 'public_ip="192.0.2.12",subnet="10.244.2.0/24"'];
    const ok = checkUdp({ netConf: NET, leases: [OWN, PEER], own: OWN, uplink: UPLINK, node: udpNode(), metrics: metricsText(rows) }, {});
    assert.deepEqual(ok.problems, []);
    assert.equal(ok.facts['forwarderEntries'], 2);
    const late = checkUdp({ netConf: NET, leases: [OWN, PEER, lease('10.244.3.0/24', '192.0.2.13', '')], own: OWN, uplink: UPLINK, node: udpNode(), metrics: metricsText(rows) }, {});
    assert.deepEqual(late.problems.map((p) => p.detail.split(':')[0]), ['forwarder entry missing']);
    const blind = checkUdp({ netConf: NET, leases: [OWN, PEER], own: OWN, uplink: UPLINK, node: udpNode(), metrics: null }, {});
    assert.deepEqual([blind.problems, blind.facts['forwarder']], [[], 'not read (no --metrics-addr)']);
  });
});

// agent/udp/counters: drop accounting and the weftd_udp_* families refreshed at scrape time.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DROP_LABELS, DROP_UNKNOWN_NODE, UDP_METRICS, UdpCounters, defineUdpMetrics, exportUdpMetrics } from '../../../../agent/udp/counters.ts';
import { Metrics } from '../../../../agent/metrics.ts';

void describe('udp counters', () => {
  it('drop() accumulates by reason; every reason has a label', () => {
    const c = new UdpCounters();
    c.drop(DROP_UNKNOWN_NODE);
    c.drop(DROP_UNKNOWN_NODE, 4);
    assert.equal(c.drops[DROP_UNKNOWN_NODE], 5);
    assert.equal(c.drops.length, DROP_LABELS.length);
    assert.equal(new Set(DROP_LABELS).size, DROP_LABELS.length);
  });

  it('a collector copies the live counters into /metrics on every format()', () => {
    const m = new Metrics();
    const c = new UdpCounters();
    defineUdpMetrics(m);
    m.addCollector(() => exportUdpMetrics(m, c));
    c.txPackets = 3;
    c.drop(DROP_UNKNOWN_NODE, 2);
    let text = m.format();
    assert.match(text, /^weftd_udp_packets_total\{direction="tx"\} 3$/m);
    assert.match(text, /^weftd_udp_drops_total\{reason="unknown-node"\} 2$/m);
    assert.match(text, /^# TYPE weftd_udp_drops_total counter$/m);
    c.drop(DROP_UNKNOWN_NODE);
    text = m.format();
    assert.match(text, /^weftd_udp_drops_total\{reason="unknown-node"\} 3$/m);
    assert.equal(m.get(UDP_METRICS.drops, { reason: 'foreign-source' }), 0);
  });
});

// Counters of the udp forwarder (plain numbers bumped per packet, no allocation) and their
// export to weftd's /metrics as weftd_udp_* families.
import type { Metrics } from '../metrics.ts';
import type { PeerRow } from './peer-table.ts';

/** Drop reasons, indexes into UdpCounters.drops; DROP_LABELS names them in /metrics. */
export const DROP_MALFORMED = 0;
export const DROP_OWN_SUBNET = 1;
export const DROP_NO_ROUTE = 2;
export const DROP_TTL = 3;
export const DROP_UNKNOWN_NODE = 4;
export const DROP_FOREIGN_SOURCE = 5;
export const DROP_NOT_LOCAL = 6;
export const DROP_TRUNCATED = 7;
export const DROP_SEND_FULL = 8;
export const DROP_TUN_WRITE = 9;

/** The `reason` label of each drop index (same order as the constants above). */
export const DROP_LABELS: readonly string[] = [
  'malformed', 'own-subnet', 'no-route', 'ttl-exceeded', 'unknown-node', 'foreign-source', 'not-local', 'truncated', 'send-queue-full', 'tun-write',
];

/** Packets and bytes each way, ICMP errors sent, drops by reason; read by the metrics collector. */
export class UdpCounters {
  /** TUN -> UDP: inner packets sent to peers. */
  txPackets = 0;
  txBytes = 0;
  /** UDP -> TUN: inner packets delivered to the node's stack. */
  rxPackets = 0;
  rxBytes = 0;
  icmpUnreachable = 0;
  icmpTimeExceeded = 0;
  /** Wake-ups of each side (batching efficiency = packets / wake-ups). */
  tunWakeups = 0;
  udpWakeups = 0;
  readonly drops = new Float64Array(DROP_LABELS.length);

  /** Counts `n` drops for a DROP_* reason. */
  drop(reason: number, n = 1): void {
    this.drops[reason] = (this.drops[reason] ?? 0) + n;
  }
}

/** Metric names of the forwarder. */
export const UDP_METRICS = {
  packets: 'weftd_udp_packets_total',
  bytes: 'weftd_udp_bytes_total',
  drops: 'weftd_udp_drops_total',
  icmp: 'weftd_udp_icmp_errors_sent_total',
  wakeups: 'weftd_udp_wakeups_total',
  peers: 'weftd_udp_forwarder_entries',
  peer: 'weftd_udp_forwarder_entry',
} as const;

/** Declares the weftd_udp_* families in `m` (idempotent). */
export function defineUdpMetrics(m: Metrics): void {
  m.define(UDP_METRICS.packets, 'counter', 'udp backend: inner packets forwarded, by direction (tx: TUN to peers, rx: peers to TUN).');
  m.define(UDP_METRICS.bytes, 'counter', 'udp backend: inner packet bytes forwarded, by direction.');
  m.define(UDP_METRICS.drops, 'counter', 'udp backend: packets dropped, by reason (unknown-node and foreign-source are strangers).');
  m.define(UDP_METRICS.icmp, 'counter', 'udp backend: ICMP errors generated, by type (net-unreachable, time-exceeded).');
  m.define(UDP_METRICS.wakeups, 'counter', 'udp backend: readiness wake-ups, by side (tun, udp).');
  m.define(UDP_METRICS.peers, 'gauge', "udp backend: entries in the forwarder's lease table, this node's included.");
  m.define(UDP_METRICS.peer, 'gauge', "udp backend: one series (value 1) per forwarder entry: a lease subnet and the public IP its packets go to; as many as udp leases.");
}

/** Replaces the forwarder-entry series with `rows` (one per lease: the label sets follow the lease table, never grow past it). */
export function exportUdpPeers(m: Metrics, rows: readonly PeerRow[]): void {
  m.clear(UDP_METRICS.peer);
  for (const r of rows) m.set(UDP_METRICS.peer, 1, { subnet: r.subnet, public_ip: r.publicIp });
  m.set(UDP_METRICS.peers, rows.length);
}

/** Copies the counters into `m` (called before each /metrics answer). */
export function exportUdpMetrics(m: Metrics, c: UdpCounters): void {
  m.set(UDP_METRICS.packets, c.txPackets, { direction: 'tx' });
  m.set(UDP_METRICS.packets, c.rxPackets, { direction: 'rx' });
  m.set(UDP_METRICS.bytes, c.txBytes, { direction: 'tx' });
  m.set(UDP_METRICS.bytes, c.rxBytes, { direction: 'rx' });
  DROP_LABELS.forEach((reason, i) => m.set(UDP_METRICS.drops, c.drops[i] ?? 0, { reason }));
  m.set(UDP_METRICS.icmp, c.icmpUnreachable, { type: 'net-unreachable' });
  m.set(UDP_METRICS.icmp, c.icmpTimeExceeded, { type: 'time-exceeded' });
  m.set(UDP_METRICS.wakeups, c.tunWakeups, { side: 'tun' });
  m.set(UDP_METRICS.wakeups, c.udpWakeups, { side: 'udp' });
}

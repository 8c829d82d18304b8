// Check "peers" on the udp backend: the kernel holds only flannel0 and one route for the Network
// through it; the per-peer state is weftd's forwarder table, which weftd exports on /metrics
// (weftd_udp_forwarder_entry{subnet, public_ip}). That table is compared with the leases the
// forwarder must take (udpPeerLeases, the very filter weftd's forwarder uses), each
// difference named like the kernel drift of the other backends. Pure over the read state.
import { UDP_TUN_NAME } from '../../lib/flannel/devices.ts';
import { UDP_METRICS, udpPeerLeases, type PeerRow } from '../../agent/inspect.ts';
import type { PeersInput } from './peers-input.ts';
import { WEFTD_FIXES, type CheckResult, type Problem } from './problem.ts';

const check = 'peers';
const RESTART = 'weftd takes every lease change at once, so a difference that persists means its forwarder is stuck: systemctl restart weftd (journalctl -u weftd for why)';

/** The forwarder entries in weftd's parsed /metrics; null when it exports none (not udp, or an older weftd). */
export function forwarderEntries(metrics: Map<string, number>): PeerRow[] | null {
  if (!metrics.has(UDP_METRICS.peers)) return null;
  const rows: PeerRow[] = [];
  for (const key of metrics.keys()) {
    if (!key.startsWith(`${UDP_METRICS.peer}{`)) continue;
    const subnet = /[{,]subnet="([^"]*)"/.exec(key)?.[1];
    const publicIp = /[{,]public_ip="([^"]*)"/.exec(key)?.[1];
    if (subnet !== undefined && publicIp !== undefined) rows.push({ subnet, publicIp });
  }
  return rows;
}

/** Forwarder entries against the leases: missing, drifted (another node address) and stale ones. */
export function compareForwarder(want: readonly PeerRow[], have: readonly PeerRow[]): Problem[] {
  const problems: Problem[] = [];
  const got = new Map(have.map((r) => [r.subnet, r.publicIp]));
  const leased = new Set(want.map((r) => r.subnet));
  for (const w of want) {
    const ip = got.get(w.subnet);
    if (ip === undefined) problems.push({ check, detail: `forwarder entry missing: ${w.subnet} should go to ${w.publicIp} (weftd's udp forwarder has not taken this lease: packets to it are dropped as no-route)`, fix: RESTART });
    else if (ip !== w.publicIp) problems.push({ check, detail: `forwarder entry drifted: ${w.subnet} goes to ${ip}, but its lease says ${w.publicIp}`, fix: RESTART });
  }
  for (const h of have) {
    if (!leased.has(h.subnet)) problems.push({ check, detail: `stale forwarder entry: ${h.subnet} -> ${h.publicIp} matches no lease (traffic to that subnet goes to a node that is gone)`, fix: RESTART });
  }
  return problems;
}

/** The udp peers check: flannel0, the Network route, and the forwarder table when weftd's metrics were read. */
export function checkUdp(i: PeersInput, facts: Record<string, unknown>): CheckResult {
  const problems: Problem[] = [];
  const tun = i.node.links.find((l) => l.name === UDP_TUN_NAME);
  if (tun === undefined) {
    problems.push({ check, detail: `${UDP_TUN_NAME} does not exist: no traffic reaches other nodes`, fix: 'systemctl restart weftd (it creates the TUN device and forwards for it)' });
    return { check, problems, facts };
  }
  if (!i.node.routes.some((r) => r.dst === i.netConf.network && r.oif === tun.index)) {
    problems.push({ check, detail: `no route for the Network ${i.netConf.network} via ${UDP_TUN_NAME}`, fix: `${WEFTD_FIXES}; by hand: ip route replace ${i.netConf.network} dev ${UDP_TUN_NAME}` });
  }
  const metrics = i.metrics ?? null;
  const have = metrics === null ? null : forwarderEntries(metrics);
  if (have === null) {
    facts['forwarder'] = metrics === null ? 'not read (no --metrics-addr)' : 'weftd exports no forwarder entries';
    return { check, problems, facts };
  }
  const want = udpPeerLeases(i.leases, i.own.subnet).map((l) => ({ subnet: l.subnet, publicIp: l.publicIp }));
  facts['forwarderEntries'] = have.length;
  problems.push(...compareForwarder(want, have));
  return { check, problems, facts };
}

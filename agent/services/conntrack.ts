// Stale UDP conntrack entries, deleted as kube-proxy deletes them: a UDP client that keeps its source
// port keeps its conntrack entry (refreshed by every datagram), so it would go on reaching an endpoint
// that left the Service, or, for datagrams sent before the Service had endpoints, go on not being
// translated at all. For each endpoint a UDP Service port no longer uses, the entries whose original
// destination is one of the port's addresses (or its NodePort) and whose reply comes from that
// endpoint are deleted; for a port that gained its first endpoints, every entry to its addresses.
// `conntrack -D` runs in weftd's netns (or the given one) after the table changed. Working out what
// to delete is pure.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { AgentLog } from '../log.ts';
import type { ServicePortUnit } from './model.ts';

/** One endpoint a UDP Service port stopped using, with the addresses and ports clients reached it by. */
export interface StaleUdp {
  family: 4 | 6;
  /** ClusterIP, externalIPs and LoadBalancer IPs of the port. */
  addrs: string[];
  port: number;
  nodePort?: number;
  /** The endpoint that left; absent: the port gained its first endpoints (entries to its addresses were never translated). */
  endpoint?: string;
}

function endpointsOf(u: ServicePortUnit): Set<string> {
  return new Set([...u.cluster, ...u.internal, ...u.external].map((b) => b.ip));
}

function target(u: ServicePortUnit): Omit<StaleUdp, 'endpoint'> {
  return { family: u.family, addrs: [...(u.clusterIP !== undefined ? [u.clusterIP] : []), ...u.externalAddrs], port: u.port, ...(u.nodePort !== undefined ? { nodePort: u.nodePort } : {}) };
}

/** The UDP endpoints `before` used and `after` (the same Service's units after a change) does not, and the UDP ports that gained their first endpoints. */
export function staleUdpEndpoints(before: readonly ServicePortUnit[], after: readonly ServicePortUnit[]): StaleUdp[] {
  const next = new Map(after.map((u) => [u.key, u]));
  const prev = new Map(before.map((u) => [u.key, u]));
  const out: StaleUdp[] = [];
  for (const u of after) {
    const b = prev.get(u.key);
    if (u.proto === 'udp' && endpointsOf(u).size > 0 && (b === undefined || endpointsOf(b).size === 0)) out.push(target(u));
  }
  for (const u of before) {
    if (u.proto !== 'udp') continue;
    const a = next.get(u.key);
    const still = a === undefined ? new Set<string>() : endpointsOf(a);
    for (const ip of endpointsOf(u)) {
      if (still.has(ip)) continue;
      out.push({ ...target(u), endpoint: ip });
    }
  }
  return out;
}

/** The `conntrack` argument lists deleting one stale endpoint's entries. */
export function conntrackArgs(s: StaleUdp): string[][] {
  const fam = s.family === 6 ? ['-f', 'ipv6'] : [];
  const reply = s.endpoint === undefined ? [] : ['--reply-src', s.endpoint];
  const out = s.addrs.map((a) => ['-D', ...fam, '-p', 'udp', '--orig-dst', a, '--orig-port-dst', String(s.port), ...reply]);
  // A NodePort without an endpoint to match would delete other Services' flows to the port on other addresses: only by endpoint.
  if (s.nodePort !== undefined && s.endpoint !== undefined) out.push(['-D', ...fam, '-p', 'udp', '--orig-port-dst', String(s.nodePort), ...reply]);
  return out;
}

const CONNTRACK = ['/usr/sbin/conntrack', '/sbin/conntrack', '/usr/bin/conntrack'];
const NSENTER = ['/usr/bin/nsenter', '/bin/nsenter'];
let warnedMissing = false;

/** Deletes the entries (asynchronously; the data plane is already right). `conntrack` exits 1 when nothing matched: not an error. */
export function flushStaleUdp(stale: readonly StaleUdp[], log: AgentLog, netnsPath?: string): void {
  if (stale.length === 0) return;
  const tool = CONNTRACK.find((p) => existsSync(p));
  if (tool === undefined) {
    if (!warnedMissing) log.warn('conntrack tool not found: stale UDP conntrack entries of removed endpoints stay until they time out');
    warnedMissing = true;
    return;
  }
  for (const s of stale) {
    for (const args of conntrackArgs(s)) {
      const argv = netnsPath === undefined ? [tool, ...args] : [NSENTER.find((p) => existsSync(p)) ?? 'nsenter', `--net=${netnsPath}`, '--', tool, ...args];
      const p = spawn(argv[0] as string, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      p.stderr.on('data', (d: Buffer) => { err += d.toString(); });
      p.on('error', (e) => log.warn('conntrack failed to start', { error: e }));
      p.on('close', (code) => { if (code !== 0 && code !== 1) log.warn('conntrack -D failed', { args, code, stderr: err.trim().slice(0, 300) }); });
    }
  }
}

// Kernel-state readers and probe lists for the cluster end-to-end tests: `ip -j` inside node
// namespaces (never the root one), so assertions check what the kernel holds.
import assert from 'node:assert/strict';
import { type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster, ClusterNode } from '../../../testkit/cluster.ts';
import { nsExec, nsRun } from '../../../testkit/topology.ts';
import type { Probe } from '../../../testkit/probe.ts';
import { spawnInNetns } from '../../../testkit/netns.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

/** Why the cluster tests cannot run here, or false. */
export function skipReason(opts: { etcd?: boolean } = {}): string | false {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces)';
  if (!existsSync(join(ROOT, 'dist', 'bin', 'weftd'))) return 'dist/bin/weftd missing: run npm run build';
  if (opts.etcd && (nsExecSyncAvailable('etcd') === false)) return 'etcd not installed';
  return false;
}

function nsExecSyncAvailable(bin: string): boolean {
  return ['/usr/bin', '/usr/sbin', '/usr/local/bin'].some((d) => existsSync(join(d, bin)));
}

async function ipJson<T>(netns: string, args: string[]): Promise<T[]> {
  const r = await nsExec(netns, ['ip', '-j', ...args]);
  if (r.code !== 0) return [];
  const text = r.stdout.trim();
  return text === '' ? [] : (JSON.parse(text) as T[]);
}

export interface IpRoute { dst: string; gateway?: string; dev?: string; protocol?: string; flags?: string[] }

/** Routes weftd installed on a node (protocol 87). */
export function weftRoutes(n: ClusterNode): Promise<IpRoute[]> {
  return ipJson<IpRoute>(n.netns, ['route', 'show', 'proto', '87']);
}

/** Permanent neighbours on flannel.1. */
export async function vtepNeighs(n: ClusterNode): Promise<Array<{ dst: string; lladdr?: string }>> {
  return ipJson(n.netns, ['neigh', 'show', 'dev', 'flannel.1', 'nud', 'permanent']);
}

/** FDB entries of flannel.1 with a remote (dst). */
export async function vtepFdb(n: ClusterNode): Promise<Array<{ mac: string; dst?: string }>> {
  const r = await nsExec(n.netns, ['bridge', '-j', 'fdb', 'show', 'dev', 'flannel.1']);
  if (r.code !== 0 || r.stdout.trim() === '') return [];
  return (JSON.parse(r.stdout) as Array<{ mac: string; dst?: string }>).filter((f) => f.dst !== undefined);
}

/** The VTEP link of a node, or null. */
export async function vtepLink(n: ClusterNode): Promise<{ ifindex: number; address: string; mtu: number } | null> {
  return (await ipJson<{ ifindex: number; address: string; mtu: number }>(n.netns, ['link', 'show', 'dev', 'flannel.1']))[0] ?? null;
}

/** Every pod to every other pod, every pod to every node, every node to every pod. */
export function allProbes(c: Cluster): Probe[] {
  const probes: Probe[] = [];
  for (const a of c.pods) for (const b of c.pods) if (a !== b) probes.push({ from: a.name, to: b.name, toIp: b.ip, fromNetns: a.netns });
  for (const a of c.pods) for (const n of c.nodes) probes.push({ from: a.name, to: n.netns, toIp: n.ip, fromNetns: a.netns });
  for (const n of c.nodes) for (const b of c.pods) probes.push({ from: n.netns, to: b.name, toIp: b.ip, fromNetns: n.netns });
  return probes;
}

const ECHO_SERVER = "require('net').createServer((s)=>s.end(s.remoteAddress)).listen(9999,'0.0.0.0')";

/** Starts a TCP server on port 9999 in `netns` that answers each connection with the peer address it sees. */
export function echoPeer(c: Cluster, netns: string): void {
  c.topo.spawnIn(netns, ['node', '-e', ECHO_SERVER]);
}

/** Connects from `fromNetns` to an echoPeer server at `ip` and returns the source address the server saw. */
export async function peerSeenBy(fromNetns: string, ip: string): Promise<string> {
  const client = `const s=require('net').connect(9999,'${ip}');let d='';s.on('data',(x)=>d+=x);s.on('end',()=>{process.stdout.write(d)});s.on('error',(e)=>{console.error(e.message);process.exit(1)})`;
  for (let i = 0; i < 40; i++) {
    const r = await nsExec(fromNetns, ['node', '-e', client], { timeoutMs: 5000 });
    if (r.code === 0 && r.stdout !== '') return r.stdout.replace(/^::ffff:/, '');
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`no answer from ${ip}:9999 (from ${fromNetns})`);
}

/** One quick ping (200 ms wait); true on a reply. */
export async function pingOnce(fromNetns: string, ip: string): Promise<boolean> {
  return (await nsExec(fromNetns, ['ping', '-c', '1', '-W', '0.2', '-n', '-q', ip])).code === 0;
}

/** IPv6 routes weftd installed on a node (protocol 87). */
export function weftRoutes6(n: ClusterNode): Promise<IpRoute[]> {
  return ipJson<IpRoute>(n.netns, ['-6', 'route', 'show', 'proto', '87']);
}

/** Permanent IPv6 neighbours on flannel-v6.1. */
export async function vtep6Neighs(n: ClusterNode): Promise<Array<{ dst: string; lladdr?: string }>> {
  return ipJson(n.netns, ['-6', 'neigh', 'show', 'dev', 'flannel-v6.1', 'nud', 'permanent']);
}

/** FDB entries of flannel-v6.1 with a remote (dst). */
export async function vtep6Fdb(n: ClusterNode): Promise<Array<{ mac: string; dst?: string }>> {
  const r = await nsExec(n.netns, ['bridge', '-j', 'fdb', 'show', 'dev', 'flannel-v6.1']);
  if (r.code !== 0 || r.stdout.trim() === '') return [];
  return (JSON.parse(r.stdout) as Array<{ mac: string; dst?: string }>).filter((f) => f.dst !== undefined);
}

/** Every pod to every other pod over IPv6, every pod to every node and every node to every pod (IPv6 underlay addresses). */
export function allProbes6(c: Cluster): Probe[] {
  const probes: Probe[] = [];
  for (const a of c.pods) for (const b of c.pods) if (a !== b && b.ip6 !== undefined) probes.push({ from: a.name, to: b.name, toIp: b.ip6, fromNetns: a.netns });
  for (const a of c.pods) for (const n of c.nodes) if (n.ip6 !== undefined) probes.push({ from: a.name, to: n.netns, toIp: n.ip6, fromNetns: a.netns });
  for (const n of c.nodes) for (const b of c.pods) if (b.ip6 !== undefined) probes.push({ from: n.netns, to: b.name, toIp: b.ip6, fromNetns: n.netns });
  return probes;
}

/** A `ping -D -i 0.1` running from a pod namespace; stop() returns the longest gap (ms) between consecutive replies and when it began (epoch ms). */
export function pingLog(fromNetns: string, ip: string): { stop: () => Promise<{ maxGapMs: number; replies: number; gapFrom: number }> } {
  const p: ChildProcess = spawnInNetns(fromNetns, ['ping', '-D', '-i', '0.1', ip], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  p.stdout?.on('data', (d: Buffer) => { out += d.toString(); });
  return {
    stop: async () => {
      const closed = new Promise((r) => p.once('close', r));
      p.kill('SIGINT');
      await closed;
      const ts = [...out.matchAll(/^\[(\d+\.\d+)\] \d+ bytes from/gm)].map((m) => Number(m[1]) * 1000);
      let maxGapMs = 0;
      let gapFrom = 0;
      for (let i = 1; i < ts.length; i++) {
        const gap = (ts[i] as number) - (ts[i - 1] as number);
        if (gap > maxGapMs) [maxGapMs, gapFrom] = [gap, ts[i - 1] as number];
      }
      return { maxGapMs, replies: ts.length, gapFrom };
    },
  };
}

/** flannel's own CNI plugin (scripts/flannel-cni-setup.sh), run on flanneld's node of the mixed clusters. */
export const FLANNEL_CNI = `${process.env['WEFT_CACHE_DIR'] ?? '/var/cache/weft'}/go-bin/flannel-cni-v0.9.1/flannel`;

/** Main-table routes of a node to exactly `dst`, as `ip -j` prints them. */
export async function routesTo(n: ClusterNode, dst: string): Promise<Array<{ dst: string; gateway?: string; dev?: string; flags?: string[] }>> {
  const r = await nsRun(n.netns, ['ip', '-j', 'route', 'show', 'exact', dst]);
  return r.trim() ? JSON.parse(r) as Array<{ dst: string; gateway?: string; dev?: string; flags?: string[] }> : [];
}

/** What `n` must have programmed for peer `p` (flannel's per-peer entries; the same whether p runs flanneld or weftd). */
export async function assertProgrammedFor(n: ClusterNode, p: ClusterNode, backend: string): Promise<void> {
  assert.ok(p.subnet);
  if (backend === 'udp') {
    // udp keeps peers in the process: the kernel only routes the whole Network into the TUN.
    assert.deepEqual((await routesTo(n, '10.244.0.0/16')).map((r) => r.dev), ['flannel0'], `${n.netns}: Network via flannel0`);
    return;
  }
  const routes = await routesTo(n, p.subnet);
  assert.equal(routes.length, 1, `${n.netns}: one route to ${p.netns}'s ${p.subnet}: ${JSON.stringify(routes)}`);
  const r = routes[0];
  if (backend === 'host-gw') {
    assert.deepEqual([r?.gateway, r?.dev], [p.ip, 'eth0'], `${n.netns} -> ${p.netns} host-gw route`);
    return;
  }
  const vtep = p.subnet.split('/')[0];
  assert.deepEqual([r?.gateway, r?.dev, r?.flags?.includes('onlink')], [vtep, 'flannel.1', true], `${n.netns} -> ${p.netns} vxlan route`);
  const mac = (await vtepLink(p))?.address;
  assert.ok(mac);
  assert.deepEqual((await vtepNeighs(n)).filter((x) => x.dst === vtep).map((x) => x.lladdr), [mac], `${n.netns}: neighbour ${vtep} -> ${p.netns}'s VTEP MAC`);
  assert.deepEqual((await vtepFdb(n)).filter((x) => x.mac === mac).map((x) => x.dst), [p.ip], `${n.netns}: FDB ${mac} -> ${p.ip}`);
}

type GapLog = { maxGapMs: number; replies: number; gapFrom: number };

/**
 * Migrates node `f` in place to `to` (flanneld -> weftd or back) while two ping logs run between `ipA`
 * (pinged from `netnsB`) and `ipB` (pinged from `netnsA`); returns both logs [out, back].
 */
export async function swapAgentWithPings(c: Cluster, f: ClusterNode, to: 'weftd' | 'flanneld', a: { netns: string; ip: string }, b: { netns: string; ip: string }): Promise<[GapLog, GapLog]> {
  const out = pingLog(a.netns, b.ip);
  const back = pingLog(b.netns, a.ip);
  await new Promise((r) => setTimeout(r, 500));
  if (to === 'weftd') {
    await c.stopFlanneld(f);
    await c.startWeftd(f);
  } else {
    await c.stopWeftd(f);
    await c.startFlanneld(f);
  }
  await new Promise((r) => setTimeout(r, 2000));
  return [await out.stop(), await back.stop()];
}

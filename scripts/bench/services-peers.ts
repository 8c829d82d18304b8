// `npm run bench -- services-peers` (and the end of `services`): weftd --service-proxy beside the real
// kube-proxy v1.34.4 in nftables mode and in iptables mode on iptables-nft (`kube-proxy-iptables`) and
// on iptables-legacy (`kube-proxy-iptables-legacy`), from one real kube-apiserver. The bench writes N
// Services x 10 endpoints (EndpointSlices without selector, as a controller would) and then, per peer
// alone in its own node namespace: start from cold -> the last-created Service in the kernel, one
// EndpointSlice change (one endpoint replaced) -> the new endpoint in the kernel (p50/p99), rule and
// element counts, the process's CPU (and its children's: nft, iptables-restore) and peak RSS from /proc. kube-proxy keeps its default minSyncPeriod (1 s).
// WEFT_BENCH_SVC_PEER_SIZES=1,1000 (default 1,1000,5000,10000), WEFT_BENCH_SVC_PEER_BIG=0 skips the
// 1 x 10,000-endpoint Service, WEFT_BENCH_SVC_PEERS=weft,kube-proxy-nftables picks peers and their order (default all;
// `npm run bench -- services` runs this part only when it is set),
// WEFT_BENCH_SVC_PEER_CHANGES (default 20), WEFT_BENCH_SVC_PEER_LIMIT_S (default 600: each cold start's time limit),
// WEFT_BENCH_SVC_PEER_GAP_MS (default 1100: the pause between changes), WEFT_BENCH_SVC_PEER_POLL_MS
// (default 20: the period of kube-proxy's chain probe, services-peer-chains.ts, and of the legacy
// peer's restore record, services-peer-legacy.ts).
import { readFileSync } from 'node:fs';
import { Cluster, type ClusterNode } from '../../testkit/cluster.ts';
import { kubeProxyPresent } from '../../testkit/kube-proxy.ts';
import { setNodeAddresses } from '../../testkit/kube-services.ts';
import type { KubeReq } from './kube-writer.ts';
import { startHelper } from './lease-writers.ts';
import { cpuMs, statusMib } from './proc-stats.ts';
import { chainTable, nftEndpointChain, nftServiceChain, pollChains, sepChain, svcChain, type ChainPoller } from './services-peer-chains.ts';
import { PEERS, childrenCpuMs, monitorAddresses, netnsProcs, peerMode, ruleCounts, serviceProgrammed, serviceSet, startPeer, type AddressMonitor, type PeerName } from './services-peer-kernel.ts';
import { watchRestores } from './services-peer-legacy.ts';
import { loadAverage, quantile, round, type BenchResult } from './util.ts';

const env = (k: string, d: string): string => process.env[k] ?? d;
const SIZES = env('WEFT_BENCH_SVC_PEER_SIZES', '1,1000,5000,10000').split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0 && n < 60_000);
const BIG = Number(env('WEFT_BENCH_SVC_PEER_BIG', '10000'));
const CHANGES = Number(env('WEFT_BENCH_SVC_PEER_CHANGES', '20'));
const LIMIT_MS = Number(env('WEFT_BENCH_SVC_PEER_LIMIT_S', '600')) * 1000;
/** Pause between changes: more than kube-proxy's minSyncPeriod, so each change is an isolated one (back to back, kube-proxy's wait out the period). */
const GAP_MS = Number(env('WEFT_BENCH_SVC_PEER_GAP_MS', '1100'));
/** How long one change may take to show in the kernel before it is counted as not seen. */
const CHANGE_LIMIT_MS = 30_000;
/** kube-proxy's chain probe period: one netlink dump of one chain (microseconds), so it can be short. */
const POLL_MS = Number(env('WEFT_BENCH_SVC_PEER_POLL_MS', '20'));
const WANTED = env('WEFT_BENCH_SVC_PEERS', 'all').replace('all', PEERS.join(',')).split(',').filter((p): p is PeerName => (PEERS as readonly string[]).includes(p));
const NS = '/api/v1/namespaces/default';
const SLICES = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices';

type Req = KubeReq;
interface Writer { write(reqs: Req[]): Promise<number>; close(): void }

/** The writer helper (kube-writer.ts) inside the API server's namespace; write() resolves with the wall ms of its first request. */
function startWriter(c: Cluster): Writer {
  const h = startHelper(c.kube!.netns, 'kube-writer.ts', c.kube!.kubeconfig);
  const write = async (reqs: Req[]): Promise<number> => {
    let first = NaN;
    // Batches of 2,000: one line stays small, 32 requests stay in flight.
    for (let i = 0; i < reqs.length; i += 2000) {
      const { t0 } = await h.send({ reqs: reqs.slice(i, i + 2000) });
      if (Number.isNaN(first)) first = t0;
    }
    return first;
  };
  return { write, close: h.close };
}

/** Service s's ClusterIP, in the bench's ServiceCIDR 10.97.0.0/16 (the test API server's own range is a /24). */
const clusterIP = (s: number): string => `10.97.${((s + 1) >> 8) & 255}.${(s + 1) & 255}`;
const epIP = (i: number): string => `10.${100 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
/** The i-th replacement endpoint of the changes (never one of the initial ones). */
const newIP = (i: number): string => `10.150.${(i >> 8) & 255}.${i & 255}`;

const svcReq = (name: string, ip: string): Req => ['POST', `${NS}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { clusterIP: ip, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] } }];
const sliceBody = (ips: string[]) => ({ endpoints: ips.map((a) => ({ addresses: [a], nodeName: 'elsewhere', conditions: { ready: true, serving: true, terminating: false } })), ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] });
const sliceReq = (name: string, svc: string, ips: string[]): Req => ['POST', SLICES, { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: 'IPv4', metadata: { name, labels: { 'kubernetes.io/service-name': svc, 'endpointslice.kubernetes.io/managed-by': 'weft-bench' } }, ...sliceBody(ips) }];

/** What a step holds: the slices one may change (name -> endpoints now) and the Service whose arrival ends a cold start. */
interface World { label: string; lastIP: string; slices: Map<string, string[]>; serviceOf: (slice: string) => string }

/** Service s's name from its ClusterIP (the inverse of clusterIP). */
const svcName = (ip: string): string => { const [, , a, b] = ip.split('.').map(Number); return `s${((a ?? 0) << 8) + (b ?? 0) - 1}`; };

/**
 * Wall ms at which endpoint ip:8080 of Service `svc` is in the kernel: the first of a notification
 * carrying the address and (kube-proxy) its endpoint chain seen by the probe, which is late by at most
 * one poll period; `by` counts which one saw it first. The legacy peer raises no notification
 * (`notifies` false): only its probe can see it.
 */
function changeSeen(mon: AddressMonitor, probe: ChainPoller | undefined, mode: 'nftables' | 'iptables' | undefined, notifies: boolean, svc: string, ip: string, by: { notification: number; poll: number }): Promise<number> {
  let first: 'notification' | 'poll' | undefined;
  if (probe === undefined || mode === undefined) return mon.next(ip, CHANGE_LIMIT_MS).then((t) => { by.notification++; return t; });
  const chain = mode === 'nftables' ? nftEndpointChain('default', svc, 'http', ip, 8080) : sepChain(`default/${svc}:http`, `${ip}:8080`);
  const poll = probe.next(chainTable(mode)[1], chain, CHANGE_LIMIT_MS).then((t) => { first ??= 'poll'; return t; });
  const note = notifies ? mon.next(ip, CHANGE_LIMIT_MS).then((t) => { first ??= 'notification'; return t; }) : Promise.reject(new Error('no notifications'));
  return Promise.any([note, poll]).then((t) => { by[first ?? 'poll']++; return t; }, () => {
    throw new Error(`${svc} -> ${ip}: neither a notification nor its chain ${chain} in ${CHANGE_LIMIT_MS} ms (${mon.overruns()} overruns)`);
  });
}

/** One peer at one step: cold start -> last Service, CHANGES changes, counts, CPU and RSS. */
async function measurePeer(c: Cluster, n: ClusterNode, peer: PeerName, w: World, writer: Writer, seq: { next: number }): Promise<BenchResult[]> {
  const tag = `${w.label}, ${peer}`;
  const load0 = loadAverage();
  // Subscribed before the peer starts: its Service's verdict element is seen as it is committed (nft's own look-ups take seconds at 5,000 Services).
  const mon = monitorAddresses(n);
  const set = serviceSet(peer);
  const mode = peerMode(peer);
  // kube-proxy's bursts overrun the socket's 1 MiB buffer at 5,000 Services: its chains are probed by name as well.
  let probe = mode === undefined || peer === 'kube-proxy-iptables-legacy' ? undefined : pollChains(n, POLL_MS);
  const t0 = performance.timeOrigin + performance.now();
  const p = await startPeer(c, n, peer);
  const pid = p.proc.pid;
  // The record is written before kube-proxy starts and read from its first line: nothing is missed by opening it now.
  if (p.restores !== undefined) probe = watchRestores(n, p.restores, POLL_MS);
  try {
    let reached = true;
    let at = NaN;
    let coldBy: string | undefined;
    let why = '';
    // Whether the probe finds the chain its name says kube-proxy wrote (a check of the names, whoever saw the Service first).
    let named = '';
    const exited = new Promise<never>((_, reject) => p.proc.once('exit', (code) => reject(new Error(`${peer} exited with ${String(code)} (logs in ${n.dir})`))));
    exited.catch(() => {});
    if (probe !== undefined && mode !== undefined) {
      // kube-proxy: the last Service's chain, written in the transaction that fills service-ips / KUBE-SERVICES.
      const table = chainTable(mode)[1];
      const chain = mode === 'nftables' ? nftServiceChain('default', svcName(w.lastIP), 'http') : svcChain(`default/${svcName(w.lastIP)}:http`);
      const byPoll = probe.next(table, chain, LIMIT_MS).then((t) => { coldBy ??= probe?.what ?? 'probe'; return t; });
      const byNote = set === undefined ? new Promise<number>(() => {}) : mon.next(w.lastIP, LIMIT_MS, set).then((t) => { coldBy ??= 'notification'; return t; });
      at = await Promise.race([byNote, byPoll, exited]).catch((e: unknown) => { reached = false; why = e instanceof Error ? e.message : String(e); return NaN; });
      if (reached) named = `; chain ${chain} ${probe.exists(table, chain) ? 'found' : 'NOT found'} by the probe`;
    } else {
      // A cold start's burst of notifications may overrun the socket: then the element is looked up instead (seconds per look-up, later than the truth).
      let polling = true;
      const poll = (async () => {
        while (polling) {
          await new Promise((r) => setTimeout(r, 500));
          if (polling && mon.overruns() > 0 && (await serviceProgrammed(n, peer, w.lastIP))) { coldBy ??= 'nft get element after overruns'; return performance.timeOrigin + performance.now(); }
        }
        return new Promise<number>(() => {});
      })();
      const byNote = mon.next(w.lastIP, LIMIT_MS, set).then((t) => { coldBy ??= 'notification'; return t; });
      at = await Promise.race([byNote, exited, poll]).catch((e: unknown) => { reached = false; why = e instanceof Error ? e.message : String(e); return NaN; });
      polling = false;
    }
    const coldMs = at - t0;
    const coldCpu = cpuMs(pid);
    const coldKids = childrenCpuMs(n, pid);
    const rows: BenchResult[] = [{ name: `${tag}: start -> last-created Service programmed (load ${round(load0, 1)}; seen by ${coldBy ?? 'none'}${mon.overruns() > 0 ? `; ${mon.overruns()} notification overruns` : ''}${named})`, value: reached ? round(coldMs / 1000, 2) : NaN, unit: reached ? `s (CPU ${round(coldCpu / 1000, 2)} s, its children ${round(coldKids / 1000, 2)} s)` : `s: not reached in ${LIMIT_MS / 1000} s (${why}; CPU ${round(coldCpu / 1000, 2)} s, its children ${round(coldKids / 1000, 2)} s)` }];
    if (!reached) {
      // The log goes with the cluster: its end says how far the peer got.
      let text = '(no log)';
      try { text = readFileSync(p.log, 'utf8'); } catch { /* none written */ }
      const tail = text.trimEnd().split('\n').slice(-8).join('\n    ');
      process.stderr.write(`  ${tag}: not reached (${why}); still running in its namespace: ${netnsProcs(n, pid)}; its log ends:\n    ${tail}\n`);
      return rows;
    }
    // Let a kube-proxy sync still running end (it is rate-limited to one per second) before the first change.
    await new Promise((r) => setTimeout(r, 2000));
    const lat: number[] = [];
    const by = { notification: 0, poll: 0 };
    // A change not seen in CHANGE_LIMIT_MS is counted and the step goes on: its counts and RSS are still reported.
    const missed: string[] = [];
    const cpu1 = cpuMs(pid);
    const kids1 = childrenCpuMs(n, pid);
    const names = [...w.slices.keys()];
    for (let i = 0; i < CHANGES; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, GAP_MS));
      const name = names[(i * 7919) % names.length] as string;
      const ips = [...(w.slices.get(name) ?? []).slice(1), newIP(seq.next++)];
      w.slices.set(name, ips);
      const ip = ips[ips.length - 1] as string;
      const seen = changeSeen(mon, probe, mode, peer !== 'kube-proxy-iptables-legacy', w.serviceOf(name), ip, by);
      const tw = await writer.write([['PATCH', `${SLICES}/${name}`, sliceBody(ips), 'application/merge-patch+json']]);
      await seen.then((t) => { lat.push(t - tw); }, (e: unknown) => { missed.push(e instanceof Error ? e.message : String(e)); });
    }
    const changeCpu = (cpuMs(pid) - cpu1) / CHANGES;
    const changeKids = (childrenCpuMs(n, pid) - kids1) / CHANGES;
    const { rules, elements } = await ruleCounts(n, peer);
    process.stderr.write(`  ${tag}: change latencies (ms, sorted): ${[...lat].sort((a, b) => a - b).map((x) => x.toFixed(0)).join(' ')}${missed.length > 0 ? `; not seen: ${missed.join('; ')}` : ''}\n`);
    const seenText = `${missed.length === 0 ? `${CHANGES} changes` : `${lat.length} of ${CHANGES} changes seen, ${missed.length} not in ${CHANGE_LIMIT_MS / 1000} s`}; first seen by notification ${by.notification}${probe === undefined ? '' : `, by ${probe.what} ${by.poll}`}; ${mon.overruns()} notification overruns`;
    const hwm = statusMib(pid, 'VmHWM');
    rows.push(
      { name: `${tag}: one EndpointSlice change -> new endpoint in the kernel, p50 (${seenText}, ${GAP_MS} ms apart)`, value: lat.length > 0 ? round(quantile(lat, 0.5), 1) : NaN, unit: 'ms' },
      { name: `${tag}: the same, p99`, value: lat.length > 0 ? round(quantile(lat, 0.99), 1) : NaN, unit: 'ms', ...(peer === 'weft' && w.label.startsWith('10000 ') ? { target: '<= 50 ms at 10,000 Services', ok: missed.length === 0 && quantile(lat, 0.99) <= 50 } : {}) },
      { name: `${tag}: CPU per change`, value: round(changeCpu, 1), unit: `ms (its children ${round(changeKids, 1)} ms)` },
      { name: `${tag}: rules / set+map elements`, value: rules, unit: `rules, ${elements} elements` },
      { name: `${tag}: peak RSS (VmHWM)`, value: round(hwm, 1), unit: `MiB (RSS now ${round(statusMib(pid, 'VmRSS'), 1)} MiB; load at end ${round(loadAverage(), 1)})`, ...(peer === 'weft' && w.label.startsWith('10000 ') ? { target: '<= 100 MiB at 10,000 Services', ok: hwm <= 100 } : {}) },
    );
    return rows;
  } finally {
    mon.close();
    probe?.close();
    await p.stop();
  }
}

/** The side-by-side rows: the big Service first (then deleted), then the ladder of sizes. */
export async function benchServicePeers(): Promise<BenchResult[]> {
  if (!kubeProxyPresent()) throw new Error('kube-proxy v1.34.4 is not built (/var/cache/weft/go-bin/kube-v1.34.4)');
  const c = await Cluster.create({ backend: 'vxlan', store: 'kube', nodes: PEERS.length, podsPerNode: 0, network: '10.244.0.0/16', onProgress: (m) => process.stderr.write(`  ${m}\n`) });
  const writer = startWriter(c);
  const out: BenchResult[] = [];
  const report = (rows: BenchResult[]) => { for (const r of rows) process.stderr.write(`  | ${r.name} | ${r.value} ${r.unit} | ${r.target ?? ''} ${r.ok === false ? 'MISSED' : ''} |\n`); out.push(...rows); };
  try {
    // Each peer alone: the lease part of weftd stops everywhere (node 1 runs weftd again, with --service-proxy, as its peer).
    for (const n of c.nodes) await c.stopWeftd(n);
    await setNodeAddresses(c.kube!, c.nodes);
    await c.kube!.call('POST', '/apis/networking.k8s.io/v1/servicecidrs', { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: 'bench' }, spec: { cidrs: ['10.97.0.0/16'] } });
    const nodeOf = (p: PeerName) => c.nodes[PEERS.indexOf(p)] as ClusterNode;
    const seq = { next: 0 };
    // A peer that fails at one step is reported and the run goes on (the next peer, the next step).
    const run = async (w: World) => {
      for (const p of WANTED) {
        report(await measurePeer(c, nodeOf(p), p, w, writer, seq).catch((e: unknown) => [{ name: `${w.label}, ${p}: failed`, value: NaN, unit: e instanceof Error ? e.message : String(e) }]));
      }
    };
    if (BIG > 0) {
      const slices = new Map(Array.from({ length: Math.ceil(BIG / 1000) }, (_, j) => [`big-${j}`, Array.from({ length: Math.min(1000, BIG - j * 1000) }, (_, e) => epIP(j * 1000 + e))] as [string, string[]]));
      await writer.write([svcReq('big', clusterIP(59_999)), ...[...slices].map(([name, ips]) => sliceReq(name, 'big', ips))]);
      await run({ label: `1 Service x ${BIG} endpoints`, lastIP: clusterIP(59_999), slices, serviceOf: () => 'big' });
      await writer.write([['DELETE', `${NS}/services/big`], ...[...slices.keys()].map((name): Req => ['DELETE', `${SLICES}/${name}`])]);
    }
    const slices = new Map<string, string[]>();
    let have = 0;
    for (const n of [...new Set(SIZES)].sort((a, b) => a - b)) {
      const reqs: Req[] = [];
      for (let s = have; s < n; s++) {
        const ips = Array.from({ length: 10 }, (_, e) => epIP(s * 10 + e));
        // The slice first, so that a Service is complete the moment it exists.
        reqs.push(sliceReq(`s${s}-1`, `s${s}`, ips), svcReq(`s${s}`, clusterIP(s)));
        slices.set(`s${s}-1`, ips);
      }
      const tw = performance.now();
      await writer.write(reqs);
      process.stderr.write(`  services-peers: ${n} Services x 10 endpoints written (${round((performance.now() - tw) / 1000, 1)} s)\n`);
      have = n;
      // The last-created Service is never changed: it stays what a cold start must reach.
      const changeable = new Map([...slices].filter(([k]) => n === 1 || k !== `s${n - 1}-1`));
      await run({ label: `${n} Services x 10 endpoints`, lastIP: clusterIP(n - 1), slices: changeable, serviceOf: (k) => k.replace(/-1$/, '') });
      for (const [k, v] of changeable) slices.set(k, v);
    }
    return out;
  } finally {
    writer.close();
    c.destroy();
  }
}

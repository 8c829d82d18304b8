// `npm run bench -- services-pod`: the ClusterIP path against the direct pod path from a pod's network
// namespace, as pods reach Services: a client namespace on a bridge of the node namespace (its source is
// inside the cluster networks, so neither path is masqueraded), routed to a server namespace holding the
// Service's 10 endpoints. One node namespace per size (default 1 and 10,000 Services x 10 endpoints,
// programmed by the real ServiceProxy with in-memory informers), all standing at once, so that every
// round probes each size and path in turn: the machine's load moves them alike. Per round the client
// measures connect time (sequential connects) and the connect + request + close rate (svc-probe.cjs);
// a one-rule DNAT (numgen over the same servers, prerouting) is the floor of what DNAT + conntrack cost
// (it runs in the same node namespace, so it also pays weft's filter-hook rules and svc4 miss: the
// ClusterIP / one-rule DNAT row is what weft's lookup and choosing chain add per new connection);
// each path connects from its own pod address, so their TIME_WAIT tuples never meet.
// Then single-stream bulk TCP (services-bulk.ts) from the same client, through the ClusterIP, the
// one-rule DNAT (so ClusterIP ÷ DNAT is what weft's table adds per packet of an established flow) and direct.
// WEFT_BENCH_SVC_POD_SIZES (default 1,10000), WEFT_BENCH_SVC_POD_ROUNDS (default 9),
// WEFT_BENCH_SVC_POD_CONNECTS (default 400), WEFT_BENCH_SVC_POD_SECONDS (default 2).
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createTestNetnsSync } from '../../testkit/netns.ts';
import { FakeInformer } from '../../testkit/fake-informer.ts';
import { runNft } from '../../lib/netfilter/run.ts';
import { createAgentLog } from '../../agent/log.ts';
import { Metrics } from '../../agent/metrics.ts';
import { ServiceProxy } from '../../agent/services/proxy.ts';
import type { EndpointSlice, Service } from '../../agent/services/types.ts';
import { BULK_PORT, bulkRows, perRoundRatio } from './services-bulk.ts';
import { ROOT, loadAverage, quantile, round, type BenchResult } from './util.ts';

const env = (k: string, d: string): number[] => (process.env[k] ?? d).split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0);
const SIZES = env('WEFT_BENCH_SVC_POD_SIZES', '1,10000');
const ROUNDS = env('WEFT_BENCH_SVC_POD_ROUNDS', '9')[0] ?? 9;
const CONNECTS = env('WEFT_BENCH_SVC_POD_CONNECTS', '400')[0] ?? 400;
const SECONDS = env('WEFT_BENCH_SVC_POD_SECONDS', '2')[0] ?? 2;
const PROBE = join(ROOT, 'scripts', 'bench', 'svc-probe.cjs');
const SERVER_IPS = Array.from({ length: 10 }, (_, i) => `10.200.0.${10 + i}`);
/** The pod's addresses, one per probed path (inside the cluster networks, 10.100.0.0/14): one path's TIME_WAIT tuples never collide with another's. */
const POD_IPS = { 'via the ClusterIP': '10.103.255.2', 'one-rule DNAT': '10.103.255.3', 'direct to the pods': '10.103.255.4' } as const;
const BRIDGE_IP = '10.103.255.1';
const PLAIN_DNAT = '10.97.255.1';
const CLUSTER_CIDRS = ['10.100.0.0/14'];

const clusterIP = (s: number): string => `10.96.${(s >> 8) & 255}.${s & 255}`;
const fakeIP = (i: number): string => `10.${100 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;

function sh(argv: string[]): void {
  execFileSync(argv[0] as string, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
}

function service(s: number, probed: boolean): Service {
  const ports = [{ name: 'http', port: 80, protocol: 'TCP' }, ...(probed ? [{ name: 'bulk', port: BULK_PORT, protocol: 'TCP' }] : [])];
  return { metadata: { name: `s${s}`, namespace: 'bench' }, spec: { clusterIP: clusterIP(s), ports } };
}

function slice(s: number, probed: boolean): EndpointSlice {
  const ips = probed ? SERVER_IPS : Array.from({ length: 10 }, (_, e) => fakeIP(s * 10 + e));
  return {
    metadata: { name: `s${s}-x`, namespace: 'bench', labels: { 'kubernetes.io/service-name': `s${s}` } }, addressType: 'IPv4',
    endpoints: ips.map((a) => ({ addresses: [a], nodeName: 'other', conditions: { ready: true } })),
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }, ...(probed ? [{ name: 'bulk', port: BULK_PORT, protocol: 'TCP' }] : [])],
  };
}

/** One size standing: node namespace with weft's table, the server namespace and the pod namespace. */
interface Lab { size: number; node: string; server: string; pod: string; vip: string; stop: () => void }

async function startLab(size: number): Promise<Lab> {
  const node = createTestNetnsSync('wsvpn');
  const srv = createTestNetnsSync('wsvps');
  const pod = createTestNetnsSync('wsvpp');
  // Undone last-made first: the probe server, the proxy, then the namespaces.
  const cleanups: Array<() => void> = [() => node.destroySync(), () => srv.destroySync(), () => pod.destroySync()];
  const stop = () => { for (const c of cleanups.splice(0).reverse()) { try { c(); } catch { /* best effort */ } } };
  try {
    const last = size - 1;
    const services = new FakeInformer<Service>(Array.from({ length: size }, (_, s) => service(s, s === last)));
    const slices = new FakeInformer<EndpointSlice>(Array.from({ length: size }, (_, s) => slice(s, s === last)));
    const proxy = new ServiceProxy({ services, slices, node: { nodeName: 'bench', clusterCidrs: CLUSTER_CIDRS, nodePortAddresses: [] }, log: createAgentLog('warn'), metrics: new Metrics(), nft: { netnsPath: node.path } });
    cleanups.push(() => proxy.stop());
    await proxy.start();
    // Server side: a veth of the node, the endpoints' addresses, a route back to the pods.
    sh(['ip', '-n', node.name, 'link', 'add', 'wsvc0', 'type', 'veth', 'peer', 'name', 'wsvc1', 'netns', srv.name]);
    sh(['ip', '-n', node.name, 'addr', 'add', '10.200.0.1/24', 'dev', 'wsvc0']);
    for (const a of SERVER_IPS) sh(['ip', '-n', srv.name, 'addr', 'add', `${a}/24`, 'dev', 'wsvc1']);
    // Pod side: a bridge of the node with the pod's veth on it, as the bridge plugin sets a pod up.
    sh(['ip', '-n', node.name, 'link', 'add', 'wbr0', 'type', 'bridge']);
    sh(['ip', '-n', node.name, 'addr', 'add', `${BRIDGE_IP}/24`, 'dev', 'wbr0']);
    sh(['ip', '-n', node.name, 'link', 'add', 'wpod0', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', pod.name]);
    sh(['ip', '-n', node.name, 'link', 'set', 'wpod0', 'master', 'wbr0']);
    for (const a of Object.values(POD_IPS)) sh(['ip', '-n', pod.name, 'addr', 'add', `${a}/24`, 'dev', 'eth0']);
    for (const [ns, dev] of [[node.name, 'wsvc0'], [node.name, 'wbr0'], [node.name, 'wpod0'], [node.name, 'lo'], [srv.name, 'wsvc1'], [srv.name, 'lo'], [pod.name, 'eth0'], [pod.name, 'lo']] as const) sh(['ip', '-n', ns, 'link', 'set', dev, 'up']);
    sh(['ip', '-n', pod.name, 'route', 'add', 'default', 'via', BRIDGE_IP]);
    sh(['ip', '-n', srv.name, 'route', 'add', 'default', 'via', '10.200.0.1']);
    sh(['ip', 'netns', 'exec', node.name, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
    // The floor: one prerouting rule DNATing an address over the same 10 servers (numgen, as weft's choosing chains), no masquerade.
    const spread = `numgen inc mod ${SERVER_IPS.length} map { ${SERVER_IPS.map((a, i) => `${i} : ${a}`).join(', ')} }`;
    runNft(['-f', '-'], ['add table ip wbench-dnat', 'add chain ip wbench-dnat pre { type nat hook prerouting priority -100; }',
      `add rule ip wbench-dnat pre ip daddr ${PLAIN_DNAT} tcp dport 80 dnat to ${spread} : 8080`,
      // The bulk stream's floor: the same rule for the Service's second port (one iperf3 server listens on every address).
      `add rule ip wbench-dnat pre ip daddr ${PLAIN_DNAT} tcp dport ${BULK_PORT} dnat to ${spread} : ${BULK_PORT}`, ''].join('\n'), { netnsPath: node.path });
    const p = spawn('ip', ['netns', 'exec', srv.name, process.execPath, PROBE, 'server', '8080', ...SERVER_IPS], { stdio: ['ignore', 'pipe', 'inherit'] });
    cleanups.push(() => p.kill('SIGKILL'));
    await new Promise<void>((resolve, reject) => {
      p.stdout.once('data', () => resolve());
      p.once('exit', (c) => reject(new Error(`probe server exited ${String(c)}`)));
    });
    return { size, node: node.name, server: srv.name, pod: pod.name, vip: clusterIP(last), stop };
  } catch (e) {
    stop();
    throw e;
  }
}

interface Probe { connectP50Us: number; connectP90Us: number; rps: number }

function probe(pod: string, hosts: readonly string[], port: number, source: string): Probe {
  const out = execFileSync('ip', ['netns', 'exec', pod, process.execPath, PROBE, 'client', hosts.join(','), String(port), String(CONNECTS), String(SECONDS), source], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return JSON.parse(out) as Probe;
}

type PathName = keyof typeof POD_IPS;
const PATHS = Object.keys(POD_IPS) as PathName[];

/** Median and min-max of a list, for the rows. */
function stat(xs: number[], digits: number): { med: number; text: string } {
  return { med: quantile(xs, 0.5), text: `rounds ${round(Math.min(...xs), digits)}-${round(Math.max(...xs), digits)}` };
}

/** The median over rounds of one path's figure divided by its baseline's in the same round. */
function perRound(xs: readonly Probe[], base: readonly Probe[], f: (p: Probe) => number): number {
  return perRoundRatio(xs.map(f), base.map(f));
}

/** The benchmark's rows. */
export async function benchServicesPod(): Promise<BenchResult[]> {
  const labs: Lab[] = [];
  const out: BenchResult[] = [];
  try {
    for (const n of SIZES) labs.push(await startLab(n));
    const load0 = loadAverage();
    const got = new Map<string, Probe[]>();
    const key = (l: Lab, p: PathName) => `${l.size}|${p}`;
    for (let r = 0; r < ROUNDS; r++) {
      // Each round in a different order of sizes and paths: neither goes first every time.
      const order = labs.flatMap((l) => PATHS.map((p) => [l, p] as const));
      for (let i = 0; i < order.length; i++) {
        const [l, p] = order[(i + r) % order.length] as readonly [Lab, PathName];
        const res = p === 'via the ClusterIP' ? probe(l.pod, [l.vip], 80, POD_IPS[p]) : p === 'one-rule DNAT' ? probe(l.pod, [PLAIN_DNAT], 80, POD_IPS[p]) : probe(l.pod, SERVER_IPS, 8080, POD_IPS[p]);
        const list = got.get(key(l, p)) ?? [];
        list.push(res);
        got.set(key(l, p), list);
      }
    }
    const load1 = loadAverage();
    const loadText = `load ${round(load0, 1)}-${round(load1, 1)}`;
    for (const l of labs) {
      const rps = (p: PathName) => stat((got.get(key(l, p)) ?? []).map((x) => x.rps), 0);
      const con = (p: PathName) => stat((got.get(key(l, p)) ?? []).map((x) => x.connectP50Us / 1000), 3);
      const label = `weft ${l.size} Services x 10 endpoints, from a pod`;
      const direct = got.get(key(l, 'direct to the pods')) ?? [];
      for (const p of PATHS) {
        const r = rps(p);
        // The ratio is the median of per-round ratios: a path and its baseline ran seconds apart in
        // the same round, so a round the machine slowed moves both (the rounds spread 10-20x here).
        const ratio = perRound(got.get(key(l, p)) ?? [], direct, (x) => x.rps);
        out.push({ name: `${label}: connect + request rate ${p} (median of ${ROUNDS} interleaved rounds of ${SECONDS} s, ratio = median of per-round ratios, ${loadText})`, value: Math.round(r.med), unit: `req/s (${r.text})`, ratio: round(ratio, 3),
          ...(p === 'via the ClusterIP' ? { target: '>= 0.95x direct', ok: ratio >= 0.95 } : {}) });
      }
      // Both NAT paths in the same round: what weft adds over a DNAT, without the direct path's own spread.
      const viaDnat = perRound(got.get(key(l, 'via the ClusterIP')) ?? [], got.get(key(l, 'one-rule DNAT')) ?? [], (x) => x.rps);
      out.push({ name: `${label}: connect + request rate via the ClusterIP / one-rule DNAT (median of ${ROUNDS} per-round ratios, ${loadText})`, value: round(viaDnat, 3), unit: 'x' });
      const first = got.get(key(labs[0] as Lab, 'via the ClusterIP')) ?? [];
      for (const p of PATHS) {
        const c = con(p);
        const ratio = perRound(got.get(key(l, p)) ?? [], first, (x) => x.connectP50Us);
        out.push({ name: `${label}: connect p50 ${p} (median of ${ROUNDS} rounds of ${CONNECTS} connects; ratio = median of per-round ratios)`, value: round(c.med, 3), unit: `ms (${c.text})`,
          ...(p === 'via the ClusterIP' && l !== labs[0] ? { ratio: round(ratio, 3), target: `within 10% of ${labs[0]?.size} Service(s)`, ok: Math.abs(ratio - 1) <= 0.1 } : {}) });
      }
    }
    for (const l of labs) {
      out.push(...(await bulkRows(l.pod, l.server, `weft ${l.size} Services x 10 endpoints, from a pod`, [
        { label: 'via the ClusterIP', host: l.vip }, { label: 'via the one-rule DNAT', host: PLAIN_DNAT }, { label: 'direct to the pod', host: SERVER_IPS[0] as string },
      ], 'direct to the pod', [['via the ClusterIP', 'via the one-rule DNAT'], ['via the one-rule DNAT', 'direct to the pod']])));
    }
    return out;
  } finally {
    for (const l of labs) l.stop();
  }
}

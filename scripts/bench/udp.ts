// The udp backend against vxlan in the same run: single-stream TCP pod to pod across nodes
// (iperf3), ping RTT, and the forwarder's CPU cost (utime + stime of both nodes' weftd while the
// stream runs, from /proc/<pid>/stat) per gigabit moved. Runs alternate udp/vxlan so machine load
// hits both alike. Standalone: `node --import tsx scripts/bench/udp.ts`; also `npm run bench udp`.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Cluster } from '../../testkit/cluster.ts';
import { rttMs } from '../../testkit/probe.ts';
import { createIperf } from './iperf.ts';
import { median, round, type BenchResult } from './util.ts';

const ROUNDS = Number(process.env['WEFT_BENCH_ROUNDS'] ?? 3);
const SECONDS = Number(process.env['WEFT_BENCH_SECONDS'] ?? 5);
/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const USER_HZ = 100;
const iperf = createIperf(SECONDS, 8201);

/** utime + stime of a process in seconds (fields 14 and 15 of /proc/<pid>/stat, after the comm). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
}

interface Sample { gbps: number; cpuPerGbit: number }

/** Two nodes, one pod each, no NAT (the data plane alone). */
async function cluster(backend: 'udp' | 'vxlan'): Promise<Cluster> {
  return Cluster.create({ backend, store: 'file', nodes: 2, podsPerNode: 1, delegate: { ipMasq: false } });
}

/** One stream a -> b with the CPU both weftd processes used meanwhile. */
async function sample(c: Cluster): Promise<Sample> {
  const [a, b] = c.pods;
  if (!a || !b) throw new Error('cluster has no pods');
  const pids = c.nodes.map((n) => n.weftd?.pid).filter((p): p is number => p !== undefined);
  const cpu0 = pids.reduce((s, p) => s + cpuSeconds(p), 0);
  const t0 = performance.now();
  const gbps = await iperf.gbps(a.netns, b.netns, b.ip);
  const wall = (performance.now() - t0) / 1000;
  const cpu = pids.reduce((s, p) => s + cpuSeconds(p), 0) - cpu0;
  // CPU over the whole client run (SECONDS + the omitted one) per gigabit moved in that time.
  return { gbps, cpuPerGbit: cpu / (gbps * Math.min(wall, SECONDS + 1)) };
}

/** The udp rows: throughput vs vxlan, RTT vs vxlan, forwarder CPU seconds per gigabit. */
export async function benchUdp(): Promise<BenchResult[]> {
  execFileSync('iperf3', ['--version'], { stdio: 'ignore' });
  const udp = await cluster('udp');
  const vx = await cluster('vxlan');
  try {
    const u: Sample[] = [];
    const v: Sample[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const order = i % 2 === 0 ? [udp, vx] : [vx, udp];
      for (const c of order) (c === udp ? u : v).push(await sample(c));
    }
    const rtt = async (c: Cluster) => rttMs((c.pods[0] as { netns: string }).netns, (c.pods[1] as { ip: string }).ip, 50);
    const rttU = await rtt(udp);
    const rttV = await rtt(vx);
    const fmt = (xs: Sample[]) => xs.map((x) => x.gbps.toFixed(2)).join(' ');
    process.stderr.write(`  udp ${fmt(u)} | vxlan ${fmt(v)} Gbit/s; udp CPU s/Gbit ${u.map((x) => x.cpuPerGbit.toFixed(2)).join(' ')}\n`);
    const ratio = median(u.map((x, i) => x.gbps / (v[i]?.gbps ?? NaN)));
    const m = await udp.metrics(udp.nodes[0] as Cluster['nodes'][number]);
    const tx = m.get('weftd_udp_packets_total{direction="tx"}') ?? 0;
    const wake = m.get('weftd_udp_wakeups_total{side="tun"}') ?? 0;
    return [
      {
        name: `udp: pod-to-pod TCP across nodes, single stream (iperf3, ${SECONDS} s, median of ${ROUNDS}; ratio = median of per-round ratios)`,
        value: round(median(u.map((x) => x.gbps)), 3), unit: 'Gbit/s', baseline: `vxlan ${round(median(v.map((x) => x.gbps)), 2)} Gbit/s`,
        ratio: round(ratio, 3), target: '>= 0.1x', ok: ratio >= 0.1,
      },
      { name: 'udp: forwarder CPU (weftd on both nodes, user + system) per gigabit moved', value: round(median(u.map((x) => x.cpuPerGbit)), 2), unit: 'CPU s/Gbit' },
      { name: 'udp: ping RTT pod to pod across nodes (50 pings, 10 ms apart)', value: round(rttU, 3), unit: 'ms', baseline: `vxlan ${round(rttV, 3)} ms`, ratio: round(rttU / rttV, 2) },
      { name: 'udp: packets per TUN wake-up on node 1 (batching)', value: round(wake > 0 ? tx / wake : 0, 1), unit: 'packets' },
    ];
  } finally {
    udp.destroy();
    vx.destroy();
  }
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  benchUdp().then((rows) => { for (const r of rows) process.stdout.write(`${JSON.stringify(r)}\n`); }, (e: unknown) => { process.stderr.write(`${String(e)}\n`); process.exitCode = 1; });
}

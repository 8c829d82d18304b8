// Cross-node pod-to-pod TCP throughput (iperf3, one stream and 4 in parallel) through weft's vxlan and
// host-gw data planes, next to the same topology built by hand with `ip` commands (bridge, veth, VTEP
// with learning off, permanent neighbour + FDB + onlink route; or a plain route for host-gw) on the
// same underlay, with the kernel's default offloads. weft runs three ways: no NAT at all, default
// flags (the bridge masquerades, the cluster Network exempt), and weftd --ip-masq. Runs alternate so
// machine load hits all alike; each round's ratios are paired, and their medians compared.
import { execFileSync } from 'node:child_process';
import { vtepMac } from '../../lib/flannel/vtep.ts';
import { Cluster } from '../../testkit/cluster.ts';
import { Topology, nsRun } from '../../testkit/topology.ts';
import { createIperf } from './iperf.ts';
import { loadAverage, median, round, type BenchResult } from './util.ts';

const ROUNDS = Number(process.env['WEFT_BENCH_ROUNDS'] ?? 5);
const SECONDS = Number(process.env['WEFT_BENCH_SECONDS'] ?? 4);
const iperf = createIperf(SECONDS, 7201);

/** Client and server pod namespaces, and the node namespaces they sit on (for diagnostics). */
export interface Path { client: string; server: string; serverIp: string; nodes: string[]; destroy: () => void }

/** Two nodes wired by hand the way weft wires them: pod <-veth-> cni0, and vxlan or host-gw between nodes. */
export async function handBuilt(backend: 'vxlan' | 'host-gw'): Promise<Path> {
  const t = await Topology.create({ nodes: 2 });
  try {
    const mtu = backend === 'vxlan' ? 1450 : 1500;
    const sub = (id: number) => `10.245.${id}`;
    const pods: string[] = [];
    for (const n of t.nodes) {
      const run = (...cmd: string[]) => nsRun(n.netns, cmd);
      await run('ip', 'link', 'add', 'cni0', 'type', 'bridge');
      await run('ip', 'addr', 'add', `${sub(n.id)}.1/24`, 'dev', 'cni0');
      await run('ip', 'link', 'set', 'cni0', 'up');
      const pod = await t.addPod(n, 1);
      pods.push(pod.netns);
      await run('ip', 'link', 'add', 'vethbench', 'mtu', String(mtu), 'type', 'veth', 'peer', 'name', 'eth0', 'mtu', String(mtu), 'netns', pod.netns);
      await run('ip', 'link', 'set', 'vethbench', 'master', 'cni0', 'up');
      await nsRun(pod.netns, ['ip', 'link', 'set', 'lo', 'up']);
      await nsRun(pod.netns, ['ip', 'addr', 'add', `${sub(n.id)}.2/24`, 'dev', 'eth0']);
      await nsRun(pod.netns, ['ip', 'link', 'set', 'eth0', 'up']);
      await nsRun(pod.netns, ['ip', 'route', 'add', 'default', 'via', `${sub(n.id)}.1`]);
      if (backend === 'vxlan') {
        await run('ip', 'link', 'add', 'flannel.1', 'address', vtepMac(n.ip, 1), 'type', 'vxlan', 'id', '1', 'local', n.ip, 'dev', 'eth0', 'dstport', '8472', 'nolearning');
        await run('ip', 'link', 'set', 'flannel.1', 'mtu', String(mtu), 'up');
        await run('ip', 'addr', 'add', `${sub(n.id)}.0/32`, 'dev', 'flannel.1');
        // The kernel's default offloads are kept: the baseline is what the kernel does on its own.
      }
    }
    for (const n of t.nodes) {
      for (const p of t.nodes.filter((x) => x !== n)) {
        const run = (...cmd: string[]) => nsRun(n.netns, cmd);
        if (backend === 'vxlan') {
          await run('ip', 'neigh', 'add', `${sub(p.id)}.0`, 'lladdr', vtepMac(p.ip, 1), 'dev', 'flannel.1', 'nud', 'permanent');
          await run('bridge', 'fdb', 'add', vtepMac(p.ip, 1), 'dev', 'flannel.1', 'dst', p.ip, 'self', 'permanent');
          await run('ip', 'route', 'add', `${sub(p.id)}.0/24`, 'via', `${sub(p.id)}.0`, 'dev', 'flannel.1', 'onlink');
        } else {
          await run('ip', 'route', 'add', `${sub(p.id)}.0/24`, 'via', p.ip, 'dev', 'eth0');
        }
      }
    }
    return { client: pods[0] ?? '', server: pods[1] ?? '', serverIp: `${sub(2)}.2`, nodes: t.nodes.map((n) => n.netns), destroy: () => t.destroySync() };
  } catch (e) {
    t.destroySync();
    throw e;
  }
}

export type Variant = 'plain' | 'bridge-masq' | 'ip-masq';

/**
 * Two weft nodes (weftd + flannel plugin + bridge + host-local, built binaries), one pod each.
 * plain: no NAT anywhere (delegate ipMasq false, weftd without --ip-masq), the hand-built data path.
 * bridge-masq: weftd's default flags, the bridge masquerades traffic leaving the Network.
 * ip-masq: weftd --ip-masq as flannel is usually deployed. Both NAT variants put a nat hook on the
 * path, so conntrack tracks every packet: a cost any flannel-style setup pays.
 */
export async function weftBuilt(backend: 'vxlan' | 'host-gw', v: Variant): Promise<Path> {
  const c = await Cluster.create({ backend, store: 'file', nodes: 2, podsPerNode: 1, ipMasq: v === 'ip-masq', ...(v === 'plain' ? { delegate: { ipMasq: false } } : {}) });
  const [a, b] = c.pods;
  if (!a || !b) throw new Error('weft cluster has no pods');
  return { client: a.netns, server: b.netns, serverIp: b.ip, nodes: c.nodes.map((n) => n.netns), destroy: () => c.destroy() };
}

const VARIANTS: ReadonlyArray<{ v: Variant; label: string; target: number }> = [
  { v: 'plain', label: 'no NAT', target: 0.95 },
  { v: 'bridge-masq', label: 'default flags (bridge masquerade, Network exempt)', target: 0.9 },
  { v: 'ip-masq', label: 'weftd --ip-masq', target: 0.9 },
];

/** Rounds of weft variants and the hand-built path, order rotated each round; Gbit/s per path. */
async function measure(paths: Path[], streams: number): Promise<number[][]> {
  const out = paths.map(() => [] as number[]);
  for (let i = 0; i < ROUNDS; i++) {
    // Rotate the order each round so that a position effect cannot favour one side.
    for (let j = 0; j < paths.length; j++) {
      const k = (i + j) % paths.length;
      const p = paths[k] as Path;
      out[k]?.push(await iperf.gbps(p.client, p.server, p.serverIp, streams));
    }
  }
  return out;
}

/** "min-max" of the samples: the spread beside a median. */
function spread(xs: number[], digits = 2): string {
  return `${round(Math.min(...xs), digits)}-${round(Math.max(...xs), digits)}`;
}

/** The dataplane benchmark rows: per backend and stream count, each weft variant vs hand-built (median of paired ratios). */
export async function benchDataplane(): Promise<BenchResult[]> {
  execFileSync('iperf3', ['--version'], { stdio: 'ignore' });
  const rows: BenchResult[] = [];
  const backends = (process.env['WEFT_BENCH_BACKENDS'] ?? 'vxlan,host-gw').split(',').filter((b): b is 'vxlan' | 'host-gw' => b === 'vxlan' || b === 'host-gw');
  const streamCounts = (process.env['WEFT_BENCH_STREAMS'] ?? '1,4').split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0);
  for (const backend of backends) {
    const paths: Path[] = [];
    const load0 = loadAverage();
    try {
      for (const { v } of VARIANTS) paths.push(await weftBuilt(backend, v));
      paths.push(await handBuilt(backend));
      for (const streams of streamCounts) {
        const samples = await measure(paths, streams);
        const h = samples[VARIANTS.length] ?? [];
        const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ');
        process.stderr.write(`  ${backend} -P ${streams}: ${VARIANTS.map((x, i) => `${x.v} ${fmt(samples[i] ?? [])}`).join(' | ')} | hand-built ${fmt(h)} Gbit/s\n`);
        VARIANTS.forEach((x, i) => {
          const w = samples[i] ?? [];
          // Paired: each round's runs are seconds apart, so the median of per-round ratios cancels the
          // load drift of a shared machine better than a ratio of medians.
          const ratios = w.map((g, r) => g / (h[r] ?? NaN));
          const ratio = median(ratios);
          rows.push({
            name: `${backend}, ${streams === 1 ? '1 stream' : `${streams} streams`}: ${x.label} (iperf3 ${SECONDS} s, median of ${ROUNDS} interleaved rounds, weft ${spread(w)}, ratio ${spread(ratios, 3)})`,
            value: round(median(w), 2), unit: 'Gbit/s', baseline: `hand-built ${round(median(h), 2)} Gbit/s (${spread(h)})`,
            ratio: round(ratio, 3), target: `>= ${x.target}x`, ok: ratio >= x.target,
          });
        });
      }
      rows.push({ name: `${backend}: 1-min load average at the start (end in the baseline column)`, value: load0, unit: '', baseline: `end ${loadAverage()}` });
    } finally {
      for (const p of paths) p.destroy();
    }
  }
  return rows;
}

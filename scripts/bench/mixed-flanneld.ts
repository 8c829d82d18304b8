// Mixed-cluster throughput (iperf3, single stream, pod to pod): flanneld on nodes 1 and 2 (weft's
// `flannel` executable over the reference bridge/host-local), weftd on node 3, one etcd. A weft
// node <-> flannel node path (both directions) is compared with flannel <-> flannel in the same
// run, alternating the order each round. Needs the flanneld of scripts/flannel-setup.sh.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Cluster } from '../../testkit/cluster.ts';
import { createIperf } from './iperf.ts';
import { median, round, type BenchResult } from './util.ts';

const ROUNDS = Number(process.env['WEFT_BENCH_ROUNDS'] ?? 5);
const SECONDS = Number(process.env['WEFT_BENCH_SECONDS'] ?? 4);
const FLANNELD = `${process.env['WEFT_CACHE_DIR'] ?? '/var/cache/weft'}/go-bin/flannel-v0.28.10/flannel`;
const iperf = createIperf(SECONDS, 7401);

/** The rows: per backend, weft -> flannel and flannel -> weft against flannel -> flannel. */
export async function benchMixedFlanneld(): Promise<BenchResult[]> {
  execFileSync('iperf3', ['--version'], { stdio: 'ignore' });
  if (!existsSync(FLANNELD)) throw new Error(`${FLANNELD} missing: run scripts/flannel-setup.sh`);
  const rows: BenchResult[] = [];
  const backends = (process.env['WEFT_BENCH_BACKENDS'] ?? 'vxlan,host-gw').split(',').filter((b): b is 'vxlan' | 'host-gw' => b === 'vxlan' || b === 'host-gw');
  for (const backend of backends) {
    const c = await Cluster.create({
      backend, store: 'etcd', netConfInEtcd: true, nodes: 3, podsPerNode: 1, delegate: { ipMasq: false }, flanneld: { bin: FLANNELD, nodes: [1, 2] },
    });
    try {
      const [f1, f2, w] = c.pods;
      if (!f1 || !f2 || !w) throw new Error('mixed cluster has no pods');
      const ff: number[] = [];
      const wf: number[] = [];
      const fw: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const order = i % 2 === 0 ? [0, 1, 2] : [2, 1, 0];
        for (const k of order) {
          if (k === 0) ff.push(await iperf.gbps(f2.netns, f1.netns, f1.ip));
          else if (k === 1) wf.push(await iperf.gbps(w.netns, f1.netns, f1.ip));
          else fw.push(await iperf.gbps(f1.netns, w.netns, w.ip));
        }
      }
      const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ');
      process.stderr.write(`  ${backend}: flannel->flannel ${fmt(ff)} | weft->flannel ${fmt(wf)} | flannel->weft ${fmt(fw)} Gbit/s\n`);
      const base = `flannel->flannel ${round(median(ff), 2)} Gbit/s`;
      for (const [name, xs] of [['weft node -> flannel node', wf], ['flannel node -> weft node', fw]] as const) {
        const ratio = median(xs.map((x, j) => x / (ff[j] ?? NaN)));
        rows.push({
          name: `${backend} mixed cluster: ${name}, pod to pod (iperf3, ${SECONDS} s, median of ${ROUNDS}; ratio = median of per-round ratios)`,
          value: round(median(xs), 2), unit: 'Gbit/s', baseline: base, ratio: round(ratio, 3),
        });
      }
    } finally {
      c.destroy();
    }
  }
  return rows;
}

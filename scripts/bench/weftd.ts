// weftd benchmarks on a simulated vxlan cluster (3 nodes; WEFT_BENCH_NODES), with the file store, with
// etcd and with the Kubernetes API (--kube-subnet-mgr, a real kube-apiserver): idle RSS with 2 peers,
// then the scale ladder of weftd-scale.ts (1,000 / 2,500 / 5,000 remote leases or Nodes by default;
// `npm run bench -- weftd --peers=1000` for a quick run, `--stores=kube` for one lease source): the
// batch -> programmed, join latency, one weftd's cold start -> every peer programmed, CPU, peak RSS,
// and the store servers' CPU. Idle RSS is each node's weftd after 10 s with nothing happening, the
// median of the nodes (issue 18: at most 50 MiB for every lease source; kube-flannel asks 50 MiB).
import { existsSync } from 'node:fs';
import { Cluster } from '../../testkit/cluster.ts';
import { kubeBinariesPresent } from '../../testkit/kube-apiserver.ts';
import { SEA_WEFT, standaloneBinDir } from '../../testkit/standalone.ts';
import { writerFor } from './lease-writers.ts';
import { statusMib } from './proc-stats.ts';
import { watchRoutes } from './route-watch.ts';
import { benchStep, parsePeerSteps } from './weftd-scale.ts';
import { keepLogs } from './weftd-explain.ts';
import { median, round, type BenchResult } from './util.ts';

type Store = 'file' | 'etcd' | 'kube';

/** Idle: the nodes hold their leases and see each other; nothing else happens for 10 s. The median node's RSS. */
async function idleRss(c: Cluster): Promise<number> {
  await new Promise((r) => setTimeout(r, 10_000));
  return median(c.nodes.map((n) => statusMib(n.weftd?.pid, 'VmRSS')));
}

function nodeCount(): number {
  const n = Number(process.env['WEFT_BENCH_NODES'] ?? 3);
  if (!Number.isInteger(n) || n < 2 || n > 10) throw new Error('WEFT_BENCH_NODES must be an integer from 2 to 10');
  return n;
}

/** One store's rows: idle RSS, then each step of the ladder. */
async function benchStore(store: Store, steps: number[]): Promise<BenchResult[]> {
  const nodes = nodeCount();
  // WEFT_BENCH_BIN_DIR: another build's dist/bin (e.g. a copy from before a change) for a before/after in one session.
  const binDir = process.env['WEFT_BENCH_BIN_DIR'];
  const c = await Cluster.create({ backend: 'vxlan', store, nodes, podsPerNode: 0, network: '10.0.0.0/8',
    // Debug: each pass's slices and long GCs land in the logs, which explain slow joins (weftd-explain.ts).
    weftdArgs: ['--log-level', 'debug'], ...(binDir !== undefined ? { binDir } : {}), onProgress: (m) => process.stderr.write(`  ${m}\n`) });
  const w = watchRoutes(c);
  const writer = writerFor(c, store);
  try {
    const idle = await idleRss(c);
    const rows: BenchResult[] = [
      { name: `${store}: weftd idle RSS (${nodes - 1} peers, after 10 s, median of ${nodes} nodes)`, value: round(idle, 1), unit: 'MiB', target: '<= 50 MiB', ok: idle <= 50 },
    ];
    let have = 0;
    for (const n of steps) {
      process.stderr.write(`  ${store}: step ${n} peers\n`);
      const step = await benchStep(c, store, w, writer, have, n);
      // Each step's rows as soon as they exist: a long ladder interrupted still leaves its figures.
      for (const r of step) process.stderr.write(`  | ${r.name} | ${r.value} ${r.unit} | ${r.baseline ?? ''} | ${r.target ?? ''} ${r.ok === false ? 'MISSED' : ''} |\n`);
      rows.push(...step);
      have = n;
    }
    if (w.overruns() > 0) process.stderr.write(`  note: ${w.overruns()} route notification overruns (routes then listed; figures are upper bounds)\n`);
    return rows;
  } finally {
    keepLogs(c, store);
    writer.close();
    w.close();
    c.destroy();
  }
}

/**
 * Idle RSS of weftd run from the standalone file (what deploy/weft.yaml and `weft install
 * --standalone` run): a standalone bin dir, the same 3-node cluster otherwise.
 */
async function benchStandaloneIdle(store: Store): Promise<BenchResult[]> {
  const bin = standaloneBinDir();
  try {
    const c = await Cluster.create({ backend: 'vxlan', store, nodes: 3, podsPerNode: 0, network: '10.0.0.0/8', binDir: bin.dir, onProgress: (m) => process.stderr.write(`  ${m}\n`) });
    try {
      const idle = await idleRss(c);
      return [{ name: `${store}: weftd idle RSS, standalone dist/sea/weft (2 peers, after 10 s, median of 3 nodes)`, value: round(idle, 1), unit: 'MiB', target: '<= 50 MiB', ok: idle <= 50 }];
    } finally {
      c.destroy();
    }
  } finally {
    bin.remove();
  }
}

/** `--stores=file,kube` on the command line, else `fallback`. */
function storesFrom(argv: readonly string[], fallback: Store[]): Store[] {
  const flag = argv.find((a) => a.startsWith('--stores='))?.slice('--stores='.length);
  if (flag === undefined) return fallback;
  const list = flag.split(',');
  const bad = list.filter((s) => s !== 'file' && s !== 'etcd' && s !== 'kube');
  if (bad.length > 0) throw new Error(`--stores: unknown ${bad.join(', ')} (file, etcd, kube)`);
  return list as Store[];
}

/** The weftd benchmark rows: file store, etcd, then the kube API (each skipped when its server is not installed), each also from the standalone file when built (skipped with WEFT_BENCH_NO_STANDALONE=1). */
export async function benchWeftd(fallback: Store[] = ['file', 'etcd', 'kube']): Promise<BenchResult[]> {
  const steps = parsePeerSteps(process.argv, process.env['WEFT_BENCH_PEERS']);
  const rows: BenchResult[] = [];
  for (const s of storesFrom(process.argv, fallback)) {
    if (s === 'etcd' && !existsSync('/usr/bin/etcd')) continue;
    if (s === 'kube' && !kubeBinariesPresent()) {
      process.stderr.write('  kube: skipped (kube-apiserver not built: scripts/kube-setup.sh)\n');
      continue;
    }
    rows.push(...(await benchStore(s, steps)));
    if (existsSync(SEA_WEFT) && process.env['WEFT_BENCH_NO_STANDALONE'] !== '1') rows.push(...(await benchStandaloneIdle(s)));
  }
  return rows;
}

// weftd at scale: a vxlan cluster (3 node namespaces by default) whose store is filled with remote
// leases in steps (1,000 / 2,500 / 5,000 by default: `--peers=1000,2500` or WEFT_BENCH_PEERS), and
// at each step: the batch up to the step -> programmed on every node, 50 joins -> programmed on
// every node (p50/p99), then one node's weftd started cold (VTEP deleted, so its neighbours, FDB
// entries and routes are gone) -> every peer programmed again, with that weftd's CPU, peak RSS,
// and the CPU the store's servers (etcd; kube-apiserver and its etcd) spent on its list and watch.
// Everything lands in the benchmark's own node namespaces, never the root namespace.
import { join } from 'node:path';
import type { Cluster } from '../../testkit/cluster.ts';
import { nsRun } from '../../testkit/topology.ts';
import { waitFor } from '../../testkit/cluster.ts';
import { fakeLease, type LeaseWriter } from './lease-writers.ts';
import { cpuMs, findPid, statusMib } from './proc-stats.ts';
import type { RouteWatch } from './route-watch.ts';
import { explainSlowJoins, type JoinSeen } from './weftd-explain.ts';
import { loadAverage, median, quantile, round, type BenchResult } from './util.ts';

export const JOINS = 50;

/** Peer counts of the ladder: `--peers=a,b` on the command line, else WEFT_BENCH_PEERS, else 1,000 / 2,500 / 5,000. */
export function parsePeerSteps(argv: readonly string[], env: string | undefined): number[] {
  const flag = argv.find((a) => a.startsWith('--peers='))?.slice('--peers='.length) ?? env ?? '1000,2500,5000';
  const steps = flag.split(',').map((s) => Number(s.trim()));
  for (const s of steps) {
    if (!Number.isInteger(s) || s < JOINS + 1 || s > 50_000) throw new Error(`--peers: ${JSON.stringify(flag)} must be integers from ${JOINS + 1} to 50000`);
  }
  return [...new Set(steps)].sort((a, b) => a - b);
}

function wallMs(): number {
  return performance.timeOrigin + performance.now();
}

/** The store's server processes of this cluster (etcd; or kube-apiserver and the etcd behind it), by name -> pid. */
function storeServers(c: Cluster): Array<{ name: string; pid: number }> {
  const names = c.kube ? ['kube-apiserver', 'etcd'] : c.etcd ? ['etcd'] : [];
  const out: Array<{ name: string; pid: number }> = [];
  for (const name of names) {
    const pid = findPid(name, c.topo.dir);
    if (pid !== undefined) out.push({ name, pid });
  }
  return out;
}

/** The step's figures: `have` leases already written, `n` wanted; returns rows and the new count. */
export async function benchStep(c: Cluster, store: string, w: RouteWatch, writer: LeaseWriter, have: number, n: number): Promise<BenchResult[]> {
  const load0 = loadAverage();
  const rows: BenchResult[] = [];
  const tag = `${store}, ${n} peers`;
  const everywhere = (subnets: string[]) => () => { w.catchUp(); return w.seen.every((m) => subnets.every((s) => m.has(s))); };
  // 1. The batch that brings the store to n - JOINS remote leases, at once.
  const batch = Array.from({ length: n - JOINS - have }, (_, i) => fakeLease(have + i));
  const cpu0 = c.nodes.map((x) => cpuMs(x.weftd?.pid));
  const t0 = await writer.write(batch);
  await waitFor(`${batch.length} leases programmed everywhere`, everywhere(batch.map((l) => l.subnet)), 600_000, 20);
  const allMs = Math.max(...w.seen.map((m) => Math.max(...batch.map((l) => (m.get(l.subnet) ?? NaN) - t0))));
  const batchCpu = median(c.nodes.map((x, i) => cpuMs(x.weftd?.pid) - (cpu0[i] ?? NaN)));
  const writeMs = writer.lastWriteMs?.() ?? NaN;
  rows.push({ name: `${tag}: 1-min load average at the step's start (end in the baseline column)`, value: round(load0, 1), unit: '', baseline: '' });
  rows.push({ name: `${tag}: ${batch.length} leases written at once -> all programmed on all ${c.nodes.length} nodes`, value: round(allMs / 1000, 2), unit: 's',
    ...(Number.isFinite(writeMs) ? { baseline: `store acknowledged them in ${round(writeMs / 1000, 2)} s` } : {}) });
  rows.push({ name: `${tag}: weftd CPU for that batch, median node`, value: round(batchCpu, 0), unit: 'ms' });
  // 2. Joins, one at a time: the last JOINS leases of the step.
  const joins: number[] = [];
  const seen: JoinSeen[] = [];
  for (let i = 0; i < JOINS; i++) {
    const l = fakeLease(n - JOINS + i);
    const tj = await writer.write([l]);
    await waitFor(`join ${i} programmed everywhere`, everywhere([l.subnet]), 30_000, 2);
    const perNodeMs = w.seen.map((m) => (m.get(l.subnet) ?? NaN) - tj);
    seen.push({ subnet: l.subnet, writtenAt: tj, perNodeMs });
    joins.push(Math.max(...perNodeMs));
  }
  const p99 = quantile(joins, 0.99);
  process.stderr.write(`  ${tag}: join latencies (ms, sorted): ${[...joins].sort((a, b) => a - b).map((x) => x.toFixed(0)).join(' ')}\n`);
  explainSlowJoins(c, tag, seen, 200, (s) => process.stderr.write(s));
  rows.push({ name: `${tag}: join -> programmed on all ${c.nodes.length} nodes, p50 (${JOINS} joins)`, value: round(median(joins), 1), unit: 'ms' });
  rows.push({ name: `${tag}: join -> programmed on all ${c.nodes.length} nodes, p99 (${JOINS} joins)`, value: round(p99, 1), unit: 'ms', target: '<= 200 ms', ok: p99 <= 200 });
  rows.push({ name: `${tag}: weftd peak RSS, largest of the ${c.nodes.length} nodes`, value: round(Math.max(...c.nodes.map((x) => statusMib(x.weftd?.pid, 'VmHWM'))), 1), unit: 'MiB', target: '<= 120 MiB', ok: Math.max(...c.nodes.map((x) => statusMib(x.weftd?.pid, 'VmHWM'))) <= 120 });
  rows.push(...(await coldStart(c, tag, w, n)));
  rows[0] = { ...(rows[0] as BenchResult), baseline: `end ${round(loadAverage(), 1)}` };
  return rows;
}

/** Node 1's weftd stopped, its VTEP deleted, started again: start -> all n + other nodes' routes back. */
async function coldStart(c: Cluster, tag: string, w: RouteWatch, n: number): Promise<BenchResult[]> {
  const node = c.nodes[0];
  if (node === undefined) throw new Error('no node');
  const want = [...(w.seen[0]?.keys() ?? [])];
  if (want.length < n) throw new Error(`node 1 has ${want.length} routes, want ${n} or more`);
  await c.stopWeftd(node);
  await nsRun(node.netns, ['ip', 'link', 'del', 'flannel.1']);
  w.reset(0);
  const servers = storeServers(c);
  // The servers' own background rate (compaction, bookmarks, the other weftds' watches) over 3 s, subtracted below.
  const b0 = servers.map((s) => cpuMs(s.pid));
  await new Promise((r) => setTimeout(r, 3000));
  const bgRate = servers.map((s, i) => (cpuMs(s.pid) - (b0[i] ?? NaN)) / 3000);
  const s0 = servers.map((s) => cpuMs(s.pid));
  // Spawned directly (not Cluster.startWeftd): its /healthz polling would add load and give up after 20 s.
  const t0 = wallMs();
  node.weftd = c.topo.spawnIn(node.netns, c.weftdArgv(node), join(node.dir, 'weftd.log'));
  const proc = node.weftd;
  await waitFor(`node 1 reprogrammed after a cold start`, () => {
    if (proc.exitCode !== null) throw new Error(`weftd on ${node.netns} exited with ${proc.exitCode}: ${c.weftdLog(node).slice(-2000)}`);
    w.catchUp();
    const m = w.seen[0];
    return m !== undefined && want.every((s) => m.has(s));
  }, 600_000, 20);
  const ms = Math.max(...want.map((s) => (w.seen[0]?.get(s) ?? NaN) - t0));
  const t1 = wallMs();
  const s1 = servers.map((s) => cpuMs(s.pid));
  const pid = proc.pid;
  const cpu = cpuMs(pid);
  // Settle: a pass still running, the heap after the burst.
  await new Promise((r) => setTimeout(r, 2000));
  const hwm = statusMib(pid, 'VmHWM');
  const rss = statusMib(pid, 'VmRSS');
  const rows: BenchResult[] = [
    { name: `${tag}: weftd start -> all ${want.length} peers programmed (node 1, VTEP deleted first)`, value: round(ms / 1000, 2), unit: 's', target: '<= 10 s', ok: ms <= 10_000 },
    { name: `${tag}: that weftd's CPU (user + sys) from exec to all programmed`, value: round(cpu / 1000, 2), unit: 's' },
    { name: `${tag}: that weftd's peak RSS (VmHWM, 2 s after)`, value: round(hwm, 1), unit: 'MiB', baseline: `RSS then ${round(rss, 1)} MiB`, target: '<= 120 MiB', ok: hwm <= 120 },
  ];
  servers.forEach((s, i) => {
    const spent = (s1[i] ?? NaN) - (s0[i] ?? NaN);
    const bg = (bgRate[i] ?? NaN) * (t1 - t0);
    rows.push({ name: `${tag}: ${s.name} CPU during that start (list + watch of one weftd)`, value: round(spent, 0), unit: 'ms', baseline: `background ${round(bg, 0)} ms over the same time` });
  });
  return rows;
}

// The demo behind `npm run demo`: for each backend, a simulated 3-node cluster in network
// namespaces (the same harness as the end-to-end tests), pods wired by the real binaries, then a
// connectivity matrix, throughput and RTT across and within nodes, and ADD/DEL latency next to
// `node -e 0`. Removes everything it made, also on Ctrl-C or failure, unless --keep.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster, type ClusterOptions } from '../testkit/cluster.ts';
import { run } from '../testkit/exec.ts';
import { inNetns } from '../testkit/netns.ts';
import { pingMatrix, rttMs, tcpGbps, type Probe } from '../testkit/probe.ts';
import { DIST, median, round } from './bench/util.ts';

type Backend = ClusterOptions['backend'];

interface Options {
  keep: boolean;
  store: 'file' | 'etcd';
  backends: Backend[];
  seconds: number;
}

interface BackendReport {
  backend: Backend;
  matrix: Array<Probe & { ok: boolean }>;
  crossGbps: number;
  sameGbps: number;
  crossRttMs: number;
  sameRttMs: number;
  addMs: number;
  delMs: number;
  nodeMs: number;
  setupS: number;
}

const tty = process.stderr.isTTY;
const color = (code: number, s: string): string => (process.stdout.isTTY ? `\x1b[${code}m${s}\x1b[0m` : s);
const green = (s: string): string => color(32, s);
const red = (s: string): string => color(31, s);
const started = performance.now();

function step(msg: string): void {
  const t = ((performance.now() - started) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`${tty ? '\r\x1b[K' : ''}[${t}s] ${msg}\n`);
}

function bar(label: string, done: number, total: number): void {
  if (!tty) return;
  const width = 30;
  const filled = Math.round((done / Math.max(1, total)) * width);
  process.stderr.write(`\r\x1b[K${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`);
}

function parseArgs(argv: string[]): Options {
  const o: Options = { keep: false, store: 'file', backends: [], seconds: 3 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--keep') o.keep = true;
    else if (a === '--store') o.store = argv[++i] === 'etcd' ? 'etcd' : 'file';
    else if (a === '--backends') o.backends = (argv[++i] ?? '').split(',').filter(Boolean) as Backend[];
    else if (a === '--seconds') o.seconds = Number(argv[++i] ?? '3');
    else if (a === '--help' || a === '-h') {
      process.stdout.write('usage: npm run demo [-- --keep] [--store file|etcd] [--backends vxlan,host-gw,udp] [--seconds N]\n');
      process.exit(0);
    } else throw new Error(`unknown argument ${String(a)}`);
  }
  if (o.backends.length === 0) o.backends = availableBackends();
  return o;
}

/** The backends whose plugin is built and which the cluster harness knows. */
function availableBackends(): Backend[] {
  const plugin: Record<string, string> = { vxlan: 'flannel-vxlan', 'host-gw': 'host-gw', udp: 'flannel-udp' };
  const known: Backend[] = ['vxlan', 'host-gw', 'udp'];
  return known.filter((b) => existsSync(join(DIST, plugin[b] ?? '')));
}

/** Every pod to every other pod, every pod to every node, every node to every pod. */
function probes(c: Cluster): Probe[] {
  const out: Probe[] = [];
  for (const a of c.pods) for (const b of c.pods) if (a !== b) out.push({ from: a.name, to: b.name, toIp: b.ip, fromNetns: a.netns });
  for (const a of c.pods) for (const n of c.nodes) out.push({ from: a.name, to: `node${n.id}`, toIp: n.ip, fromNetns: a.netns });
  for (const n of c.nodes) for (const b of c.pods) out.push({ from: `node${n.id}`, to: b.name, toIp: b.ip, fromNetns: n.netns });
  return out;
}

/**
 * ADD and DEL of an extra pod through the conflist, `runs` times; medians in ms, with `node -e 0`
 * started the same way (`ip netns exec <node>`, by the same runner) in the same rounds. The pod's
 * namespace is made before the clock starts: a runtime hands the plugin one that exists.
 */
async function latency(c: Cluster, runs: number): Promise<{ addMs: number; delMs: number; nodeMs: number }> {
  const node = c.nodes[0];
  if (node === undefined) throw new Error('cluster has no node');
  const adds: number[] = [];
  const dels: number[] = [];
  const nodes: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = await run(inNetns(node.netns, ['node', '-e', '0']), { env: { PATH: process.env.PATH } });
    nodes.push(performance.now() - t0);
    if (r.code !== 0) throw new Error(`node -e 0 in ${node.netns} exited ${String(r.code)}: ${r.stderr}`);
    const sim = await c.topo.addPod(node, 90 + i);
    const t1 = performance.now();
    const pod = await c.wirePod(sim);
    adds.push(performance.now() - t1);
    const t2 = performance.now();
    await c.delPod(pod);
    dels.push(performance.now() - t2);
    bar('  ADD/DEL latency', i + 1, runs);
  }
  return { addMs: median(adds), delMs: median(dels), nodeMs: median(nodes) };
}

async function runBackend(backend: Backend, o: Options): Promise<{ report: BackendReport; cluster: Cluster }> {
  step(`[${backend}] building a 3-node cluster (store: ${o.store}) ...`);
  const t0 = performance.now();
  const c = await Cluster.create({ backend, store: o.store, nodes: 3, podsPerNode: 2, onProgress: (m) => step(`[${backend}] ${m}`) });
  const setupS = (performance.now() - t0) / 1000;
  try {
    const ps = probes(c);
    step(`[${backend}] connectivity matrix: ${ps.length} probes`);
    let done = 0;
    const matrix = await pingMatrix(ps, 8, () => bar('  pinging', ++done, ps.length));
    const bad = matrix.filter((m) => !m.ok).length;
    step(`[${backend}] connectivity: ${matrix.length - bad}/${matrix.length} reachable`);
    const [a, b] = [c.pods.find((p) => p.node.id === 1), c.pods.find((p) => p.node.id === 2)];
    const same = c.pods.find((p) => p.node.id === 1 && p !== a);
    if (!a || !b || !same) throw new Error('cluster lacks the pods the throughput test needs');
    step(`[${backend}] iperf3 ${a.name} -> ${b.name} (cross-node) and ${a.name} -> ${same.name} (same node), ${o.seconds} s each`);
    const crossGbps = await tcpGbps(a.netns, b.netns, b.ip, o.seconds);
    const sameGbps = await tcpGbps(a.netns, same.netns, same.ip, o.seconds);
    const crossRttMs = await rttMs(a.netns, b.ip);
    const sameRttMs = await rttMs(a.netns, same.ip);
    step(`[${backend}] ADD/DEL latency of an extra pod (5 runs)`);
    const lat = await latency(c, 5);
    return { report: { backend, matrix, crossGbps, sameGbps, crossRttMs, sameRttMs, ...lat, setupS }, cluster: c };
  } catch (e) {
    c.destroy();
    throw e;
  }
}

function printMatrix(r: BackendReport): void {
  const rows = [...new Set(r.matrix.map((m) => m.from))];
  // Columns in the rows' order (pods as created, then the nodes), so the diagonal reads straight.
  const tos = new Set(r.matrix.map((m) => m.to));
  const cols = [...rows.filter((x) => tos.has(x)), ...[...tos].filter((x) => !rows.includes(x))];
  const w = Math.max(...rows.map((x) => x.length), ...cols.map((x) => x.length)) + 1;
  const lines = [`${''.padEnd(w)}${cols.map((x) => x.padStart(w)).join('')}`];
  for (const from of rows) {
    const cells = cols.map((to) => {
      const m = r.matrix.find((x) => x.from === from && x.to === to);
      const s = m === undefined ? '-' : m.ok ? 'ok' : 'FAIL';
      return (m === undefined ? s : m.ok ? green(s.padStart(w)) : red(s.padStart(w))).padStart(w);
    });
    lines.push(`${from.padEnd(w)}${cells.join('')}`);
  }
  process.stdout.write(`\n${r.backend}: connectivity (row pings column)\n${lines.join('\n')}\n`);
}

function printSummary(reports: BackendReport[]): void {
  const head = '| backend | reachable | TCP cross-node | TCP same node | RTT cross | RTT same | ADD | DEL | node -e 0 | ADD / node |';
  const sep = '|---|---|---|---|---|---|---|---|---|---|';
  const rows = reports.map((r) => {
    const ok = r.matrix.filter((m) => m.ok).length;
    return `| ${r.backend} | ${ok}/${r.matrix.length} | ${round(r.crossGbps)} Gbit/s | ${round(r.sameGbps)} Gbit/s | ${round(r.crossRttMs, 3)} ms | ${round(r.sameRttMs, 3)} ms | ${round(r.addMs, 0)} ms | ${round(r.delMs, 0)} ms | ${round(r.nodeMs, 0)} ms | ${round(r.addMs / r.nodeMs)} |`;
  });
  process.stdout.write(`\n${head}\n${sep}\n${rows.join('\n')}\n`);
  process.stdout.write('\nADD and DEL run the whole conflist through `ip netns exec <node>` as a runtime would; node -e 0 is Node\'s bare start-up through the same wrapper.\n');
  process.stdout.write(`${throughputOrder(reports)}\n`);
}

/** Encapsulation adds work per packet, and the udp backend crosses into userspace twice per packet. */
const EXPECTED_ORDER: Backend[] = ['host-gw', 'vxlan', 'udp'];

/** The cross-node TCP figures fastest first, checked against the order the backends' designs predict. */
function throughputOrder(reports: BackendReport[]): string {
  const sorted = [...reports].sort((a, b) => b.crossGbps - a.crossGbps);
  const line = `Cross-node TCP, fastest first: ${sorted.map((r) => `${r.backend} ${round(r.crossGbps)}`).join(' > ')} Gbit/s`;
  const expected = EXPECTED_ORDER.filter((b) => reports.some((r) => r.backend === b));
  if (sorted.every((r, i) => r.backend === expected[i])) {
    return `${line}: as expected (plain routing, then in-kernel VXLAN, then weftd's userspace forwarder).`;
  }
  return `${line}: not the expected ${expected.join(' > ')}. One short iperf3 run per backend swings with the machine's load; ` +
    '`npm run bench -- dataplane udp` measures the backends interleaved against baselines in one run.';
}


/** Namespaces whose names start with the cluster prefix: proof that nothing was left behind. */
function leftovers(prefix: string): string[] {
  const out = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  return out.split('\n').map((l) => l.split(' ')[0] ?? '').filter((n) => n.startsWith(prefix));
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  if (o.backends.length === 0) throw new Error('no backend available: run npm run build');
  step(`weft demo: backends ${o.backends.join(', ')}; store ${o.store}`);
  const reports: BackendReport[] = [];
  let kept: Cluster | undefined;
  let failed = false;
  for (const [i, backend] of o.backends.entries()) {
    const { report, cluster } = await runBackend(backend, o);
    reports.push(report);
    printMatrix(report);
    if (o.keep && i === o.backends.length - 1) kept = cluster;
    else {
      const prefix = cluster.topo.prefix;
      cluster.destroy();
      const left = leftovers(prefix);
      if (left.length > 0) {
        failed = true;
        step(red(`[${backend}] left behind: ${left.join(' ')}`));
      } else step(`[${backend}] cluster removed, nothing left behind`);
    }
  }
  printSummary(reports);
  const allOk = reports.every((r) => r.matrix.every((m) => m.ok));
  if (kept !== undefined) {
    process.stdout.write(`\n--keep: the ${kept.opts.backend} cluster is still up. Explore it with:\n`);
    for (const n of kept.nodes) process.stdout.write(`  ip netns exec ${n.netns} ip route    # node${n.id} (${n.ip}), subnet ${n.subnet ?? '?'}\n`);
    for (const p of kept.pods.slice(0, 2)) process.stdout.write(`  ip netns exec ${p.netns} ping -c1 ${kept.pods.at(-1)?.ip ?? ''}    # from ${p.name}\n`);
    process.stdout.write(`Remove it with: for ns in $(ip netns list | awk '/^${kept.topo.prefix}/{print $1}'); do ip netns pids $ns | xargs -r kill; ip netns del $ns; done\n`);
    // Leave the namespaces up: detach the harness's exit cleanup by exiting without destroy().
    kept.detach();
  }
  step(allOk && !failed ? green('every cell green') : red('some probes failed'));
  process.exit(allOk && !failed ? 0 : 1);
}

main().catch((e: unknown) => {
  step(red(`demo failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`));
  process.exit(1);
});

// Benchmark: pods started in bulk (issue 29). 50 pods ADDed at once on one node through the
// kube-flannel conflist (flannel, its delegate bridge and IPAM host-local, then portmap), then the 50
// DELs at once; weft's bundles (dist/bin) against the reference (flannel's own CNI plugin in front of
// Debian's containernetworking-plugins bridge, host-local and portmap), rounds interleaved in one run
// (weft, reference, weft, ...). Each side has its own node namespace, lease and 50 pod namespaces,
// made before the clock starts; plugins run as a runtime runs them: CNI env, stdin, the cached result
// for DEL, `portMappings: []` offered as containerd does, entered with `nsenter --net` (no mount
// namespace per call). Figures: total time of the batch, p50/p99 of the pods' own times, failures,
// duplicate addresses, and CPU per pod (user + system of every process of the batch, from this
// process's reaped-children times). WEFT_BENCH_PODS (default 50) and WEFT_BENCH_ROUNDS (default 3).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CniRunner, type ConfList } from '../../testkit/cni-runner.ts';
import { addNetnsSync, deleteNetnsSync, uniqueNetnsName } from '../../testkit/netns.ts';
import { benchNetns } from './netns.ts';
import { DIST, distBin, loadAverage, median, quantile, round, type BenchResult } from './util.ts';

const CACHE = process.env['WEFT_CACHE_DIR'] ?? '/var/cache/weft';
export const REFERENCE_FLANNEL = join(CACHE, 'go-bin', 'flannel-cni-v0.9.1', 'flannel');
const REFERENCE_DIR = '/usr/lib/cni';

interface Side {
  label: 'weft' | 'reference';
  node: ReturnType<typeof benchNetns>;
  pods: string[];
  dir: string;
  runner: CniRunner;
}

/** CPU seconds of this process's reaped children (user + system), from /proc/self/stat. */
function childCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 16 and 17 (cutime, cstime) of proc(5), counted from field 3 (state) here; clock ticks of 1/100 s.
  return (Number(f[13]) + Number(f[14])) * 10;
}

/** A side: node netns, subnet.env, bin dir (the reference's is symlinks), `pods` pod namespaces. */
function makeSide(label: Side['label'], index: number, pods: number): Side {
  const node = benchNetns();
  const dir = mkdtempSync(join(tmpdir(), `weft-bench-bulk-${label}-`));
  const side: Side = { label, node, pods: [], dir, runner: undefined as unknown as CniRunner };
  const subnetFile = join(dir, 'subnet.env');
  writeFileSync(subnetFile, `FLANNEL_NETWORK=10.${120 + index}.0.0/16\nFLANNEL_SUBNET=10.${120 + index}.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n`);
  let binDir = DIST;
  if (label === 'reference') {
    binDir = join(dir, 'bin');
    mkdirSync(binDir);
    symlinkSync(REFERENCE_FLANNEL, join(binDir, 'flannel'));
    for (const p of ['bridge', 'host-local', 'portmap', 'loopback']) symlinkSync(join(REFERENCE_DIR, p), join(binDir, p));
  }
  // conf/10-flannel.conflist (kube-flannel's), with this side's files; 0.4.0: the reference flannel's newest.
  const conf: ConfList = {
    cniVersion: '0.4.0', name: 'cbr0',
    plugins: [
      { type: 'flannel', subnetFile, dataDir: join(dir, 'flannel'), ipam: { dataDir: join(dir, 'ipam') }, delegate: { hairpinMode: true, isDefaultGateway: true } },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  };
  side.runner = new CniRunner(conf, { binDirs: [binDir], wrap: ['nsenter', `--net=${node.path}`], env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' } });
  for (let i = 0; i < pods; i++) {
    const name = uniqueNetnsName('weft-b-bulk');
    addNetnsSync(name);
    side.pods.push(name);
  }
  return side;
}

function removeSide(s: Side): void {
  for (const p of s.pods) deleteNetnsSync(p);
  s.node.remove();
  rmSync(s.dir, { recursive: true, force: true });
}

interface Batch {
  totalMs: number;
  perPod: number[];
  failures: string[];
  cpuMs: number;
  ips: string[];
}

/** Runs `fn` for every pod at once; times the whole batch and each pod, counts failures and children's CPU. */
async function batch(s: Side, fn: (pod: string, i: number) => Promise<string[]>): Promise<Batch> {
  const cpu0 = childCpuMs();
  const t0 = performance.now();
  const perPod: number[] = [];
  const failures: string[] = [];
  const ips: string[] = [];
  await Promise.all(s.pods.map(async (pod, i) => {
    const t = performance.now();
    try {
      ips.push(...(await fn(pod, i)));
      perPod.push(performance.now() - t);
    } catch (e) {
      failures.push(`${pod}: ${(e as Error).message.slice(0, 300)}`);
    }
  }));
  return { totalMs: performance.now() - t0, perPod, failures, cpuMs: childCpuMs() - cpu0, ips };
}

const attachment = (pod: string, round: number): { containerId: string; netns: string; ifName: string; runtimeConfig: Record<string, unknown> } =>
  ({ containerId: `bulk-${round}-${pod}`, netns: `/var/run/netns/${pod}`, ifName: 'eth0', runtimeConfig: { portMappings: [] } });

async function addAll(s: Side, round: number): Promise<Batch> {
  return batch(s, async (pod) => {
    const r = await s.runner.add(attachment(pod, round));
    return ((r['ips'] as Array<{ address: string }> | undefined) ?? []).map((x) => x.address.split('/')[0] ?? '');
  });
}

async function delAll(s: Side, round: number): Promise<Batch> {
  return batch(s, async (pod) => {
    await s.runner.del(attachment(pod, round));
    return [];
  });
}

/** Runs the bulk benchmark; needs root, dist/bin and the reference flannel CNI plugin (scripts/flannel-cni-setup.sh). */
export async function benchBulk(pods = Number(process.env['WEFT_BENCH_PODS'] ?? 50), rounds = Number(process.env['WEFT_BENCH_ROUNDS'] ?? 3)): Promise<BenchResult[]> {
  for (const b of ['flannel', 'bridge', 'host-local', 'portmap']) distBin(b);
  readFileSync(REFERENCE_FLANNEL); // throws with the path when scripts/flannel-cni-setup.sh has not run
  const load0 = loadAverage();
  const sides: Side[] = [];
  try {
    sides.push(makeSide('weft', 0, pods), makeSide('reference', 1, pods));
    const got = new Map<string, Batch[]>();
    const keep = (key: string, b: Batch): void => void got.set(key, [...(got.get(key) ?? []), b]);
    // Round 0 is a warm-up (creates the bridge, fills weft's code caches), then `rounds` measured ones.
    for (let r = 0; r <= rounds; r++) {
      for (const s of sides) {
        const add = await addAll(s, r);
        const del = await delAll(s, r);
        if (r > 0) {
          keep(`${s.label} ADD`, add);
          keep(`${s.label} DEL`, del);
        }
        process.stderr.write(`  round ${r} ${s.label}: ADD ${round(add.totalMs)} ms (${add.failures.length} failed), DEL ${round(del.totalMs)} ms (${del.failures.length} failed)\n`);
        for (const f of [...add.failures, ...del.failures].slice(0, 3)) process.stderr.write(`    ${f}\n`);
      }
    }
    const rows: BenchResult[] = [];
    for (const cmd of ['ADD', 'DEL']) {
      const w = got.get(`weft ${cmd}`) ?? [];
      const ref = got.get(`reference ${cmd}`) ?? [];
      const totals = (bs: Batch[]): number => median(bs.map((b) => b.totalMs));
      // Per round, weft's total over the reference's of the same round: the load moves both alike.
      const ratios = w.map((b, i) => b.totalMs / (ref[i]?.totalMs ?? NaN));
      const all = (bs: Batch[]): number[] => bs.flatMap((b) => b.perPod);
      rows.push({ name: `${pods} ${cmd}s at once, total (median of ${rounds} rounds)`, value: round(totals(w)), unit: 'ms', baseline: `reference ${round(totals(ref))} ms`, ratio: round(median(ratios)), target: '<= 1', ok: median(ratios) <= 1 });
      for (const [label, bs] of [['weft', w], ['reference', ref]] as const) {
        const xs = all(bs);
        const fails = bs.reduce((n, b) => n + b.failures.length, 0);
        const dups = cmd === 'ADD' ? bs.reduce((n, b) => n + (b.ips.length - new Set(b.ips).size), 0) : 0;
        rows.push({ name: `${cmd} per pod p50 / p99, ${label}`, value: round(quantile(xs, 0.5)), unit: `/ ${round(quantile(xs, 0.99))} ms` });
        rows.push({ name: `${cmd} failures / duplicate addresses, ${label}`, value: fails, unit: `/ ${dups}`, target: '0 / 0', ok: fails === 0 && dups === 0 });
        rows.push({ name: `${cmd} CPU per pod (all processes), ${label}`, value: round(median(bs.map((b) => b.cpuMs / pods))), unit: 'ms' });
      }
    }
    rows.push({ name: 'load average (1 min) at start / end', value: load0, unit: `/ ${loadAverage()}` });
    return rows;
  } finally {
    for (const s of sides) removeSide(s);
  }
}

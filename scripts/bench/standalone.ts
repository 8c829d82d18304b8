// Benchmark: the standalone executable (dist/sea/weft, hard-linked under each plugin name) next to the
// bundles (dist/bin) and `node -e 0`, all through the same wrapper `ip netns exec <node> env -i
// PATH=... <cmd>`, interleaved in one run: loopback ADD, bridge ADD (ipMasq, host-local in-process)
// VERSION, and the kube-flannel conflist's plugin (flannel -> bridge -> host-local, all in one process)
// ADD and DEL, as wall time and as CPU time (user + system of the process at exit, through the
// cpu-report preload: steadier when other work loads the machine). Also the executable's size. The
// targets are on wall time: loopback 1.15x and bridge 1.3x for both; flannel 1.3x from the bundles,
// 1.15x from the standalone file (issue 29).
// WEFT_BENCH_SEA_ALT="label=/path/to/weft[,label2=...]" adds other builds of the standalone file as
// further sides of the same run (e.g. a snapshot build next to the code-cache one, or the build of an
// earlier commit: docs/standalone.md). WEFT_BENCH_RUNS sets the measured rounds (default 30),
// WEFT_BENCH_NO_BUNDLE=1 leaves the bundles out (a shorter run when only standalone builds are compared).
import { copyFileSync, linkSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENTRIES } from '../../cli/entries.ts';
import { benchNetns } from './netns.ts';
import { nsCommand, CPU_REPORT, DIST, distBin, loadAverage, measureOnce, median, quantile, ROOT, round, timeOnce, type BenchResult, type Command } from './util.ts';

const CLEAN_PATH = '/usr/sbin:/usr/bin:/sbin:/bin';
const SEA = join(ROOT, 'dist', 'sea', 'weft');

/** `ip netns exec <node> env -i PATH=... K=V... <argv>`: the same wrapper for every side. */
function wrapped(node: string, argv: string[], env: Record<string, string> = {}, input = ''): Command {
  const vars = Object.entries({ PATH: CLEAN_PATH, ...env }).map(([k, v]) => `${k}=${v}`);
  return nsCommand(node, ['env', '-i', ...vars, ...argv], { input });
}

/** A temp dir with `file` (default dist/sea/weft) copied as weft and hard-linked under every entry name (what `weft install --standalone` lays out). */
function standaloneDir(file = SEA): { dir: string; remove: () => void } {
  statSync(file); // throws with the path when the file was not built
  const dir = mkdtempSync(join(tmpdir(), 'weft-bench-sa-'));
  copyFileSync(file, join(dir, 'weft'));
  for (const e of ENTRIES) if (e.name !== 'weft') linkSync(join(dir, 'weft'), join(dir, e.name));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

interface Side {
  label: string;
  binDir: string;
  node: ReturnType<typeof benchNetns>;
  pod: ReturnType<typeof benchNetns>;
  dataDir: string;
  /** The flannel plugin's own node and pod (its bridge cni0 has the lease's subnet, not the bridge bench's). */
  flannelNode: ReturnType<typeof benchNetns>;
  flannelPod: ReturnType<typeof benchNetns>;
}

function cniEnv(s: Side, command: string, id: string, ifName: string, pod = s.pod): Record<string, string> {
  return { CNI_COMMAND: command, CNI_CONTAINERID: id, CNI_NETNS: pod.path, CNI_IFNAME: ifName, CNI_PATH: s.binDir };
}

/** kube-flannel's conflist entry for the flannel plugin (its delegate as kube-flannel writes it), with this side's files. */
function flannelConf(s: Side, network: string, subnet: string): string {
  const subnetFile = join(s.dataDir, 'subnet.env');
  writeFileSync(subnetFile, `FLANNEL_NETWORK=${network}\nFLANNEL_SUBNET=${subnet}\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n`);
  return JSON.stringify({
    cniVersion: '1.0.0', name: 'cbr0', type: 'flannel', subnetFile, dataDir: join(s.dataDir, 'flannel'),
    delegate: { hairpinMode: true, isDefaultGateway: true }, ipam: { dataDir: join(s.dataDir, 'flannel-ipam') },
  });
}

function bridgeConf(s: Side, subnet: string): string {
  return JSON.stringify({
    cniVersion: '1.0.0', name: 'benchsa', type: 'bridge', bridge: 'cni0', isGateway: true, ipMasq: true,
    ipam: { type: 'host-local', subnet, dataDir: s.dataDir, routes: [{ dst: '0.0.0.0/0' }] },
  });
}

/** Runs the standalone benchmark; needs root, dist/bin and dist/sea/weft. */
export function benchStandalone(runs = Number(process.env['WEFT_BENCH_RUNS'] ?? 30)): BenchResult[] {
  distBin('loopback');
  distBin('bridge');
  distBin('flannel');
  const alts = (process.env['WEFT_BENCH_SEA_ALT'] ?? '').split(',').filter((a) => a.includes('=')).map((a) => a.split('=', 2) as [string, string]);
  const dirs = [standaloneDir(), ...alts.map(([, file]) => standaloneDir(file))];
  const mk = (label: string, binDir: string): Side => ({
    label, binDir, node: benchNetns(), pod: benchNetns(), dataDir: mkdtempSync(join(tmpdir(), 'weft-bench-sa-ipam-')), flannelNode: benchNetns(), flannelPod: benchNetns(),
  });
  const withBundle = process.env['WEFT_BENCH_NO_BUNDLE'] !== '1';
  const sides = [...(withBundle ? [mk('bundle', DIST)] : []), mk('standalone', dirs[0]?.dir ?? ''), ...alts.map(([label], i) => mk(`standalone-${label}`, dirs[i + 1]?.dir ?? ''))];
  const load0 = loadAverage();
  try {
    const lo = JSON.stringify({ cniVersion: '1.0.0', name: 'lo', type: 'loopback' });
    const confs = sides.map((s, i) => bridgeConf(s, `10.${91 + i}.0.0/16`));
    const flannelConfs = sides.map((s, i) => flannelConf(s, `10.${101 + i}.0.0/16`, `10.${101 + i}.3.1/24`));
    const base = (x: Record<string, string>): Command => wrapped(sides[0]?.node.name ?? '', ['node', '-e', '0'], x);
    const samples = new Map<string, number[]>();
    const push = (key: string, ms: number): void => void samples.set(key, [...(samples.get(key) ?? []), ms]);
    // Wall time as the runtime sees it, then the same command once more with its CPU time reported.
    const t = (key: string, make: (extra: Record<string, string>) => Command, keep: boolean, after?: () => void): void => {
      const ms = timeOnce(make({}));
      after?.();
      const cpu = measureOnce(make({ NODE_OPTIONS: `--require ${CPU_REPORT}` })).cpuMs;
      after?.();
      if (keep) {
        push(key, ms);
        push(`CPU ${key}`, cpu);
      }
    };
    for (let i = 0; i < runs + 3; i++) {
      const keep = i >= 3; // warm-up rounds fill the code caches in /run/weft (written by the second run of each)
      t('node', base, keep);
      sides.forEach((s, j) => {
        const bin = (name: string): string => join(s.binDir, name);
        t(`${s.label} loopback ADD`, (x) => wrapped(s.node.name, [bin('loopback')], { ...cniEnv(s, 'ADD', `l${i}`, 'lo'), ...x }, lo), keep);
        const del = (): void => void timeOnce(wrapped(s.node.name, [bin('bridge')], cniEnv(s, 'DEL', `b${i}`, 'eth0'), confs[j]));
        t(`${s.label} bridge ADD`, (x) => wrapped(s.node.name, [bin('bridge')], { ...cniEnv(s, 'ADD', `b${i}`, 'eth0'), ...x }, confs[j]), keep, del);
        t(`${s.label} VERSION`, (x) => wrapped(s.node.name, [bin('loopback')], { CNI_COMMAND: 'VERSION', ...x }), keep);
        // flannel ADD and DEL of one pod, wall time each, then the pair again with CPU time reported.
        const fl = (cmd: string, x: Record<string, string>): Command => wrapped(s.flannelNode.name, [bin('flannel')], { ...cniEnv(s, cmd, `f${i}`, 'eth0', s.flannelPod), ...x }, flannelConfs[j]);
        const addMs = timeOnce(fl('ADD', {}));
        const delMs = timeOnce(fl('DEL', {}));
        const cpu = { NODE_OPTIONS: `--require ${CPU_REPORT}` };
        const addCpu = measureOnce(fl('ADD', cpu)).cpuMs;
        const delCpu = measureOnce(fl('DEL', cpu)).cpuMs;
        if (keep) {
          push(`${s.label} flannel ADD`, addMs);
          push(`${s.label} flannel DEL`, delMs);
          push(`CPU ${s.label} flannel ADD`, addCpu);
          push(`CPU ${s.label} flannel DEL`, delCpu);
        }
      });
    }
    const nodeMs = median(samples.get('node') ?? []);
    const nodeCpu = median(samples.get('CPU node') ?? []);
    const rows: BenchResult[] = [
      { name: 'node -e 0 (same wrapper)', value: round(nodeMs), unit: `ms (p90 ${round(quantile(samples.get('node') ?? [], 0.9))})` },
      { name: 'CPU node -e 0', value: round(nodeCpu), unit: 'ms' },
      { name: 'dist/sea/weft size', value: round(statSync(SEA).size / 2 ** 20, 1), unit: 'MiB' },
      ...alts.map(([label, file]): BenchResult => ({ name: `standalone-${label} size`, value: round(statSync(file).size / 2 ** 20, 1), unit: 'MiB' })),
    ];
    // [bundle, standalone] targets on wall time (issues 16 and 29).
    const targets: Record<string, [number, number]> = { 'loopback ADD': [1.15, 1.15], 'bridge ADD': [1.3, 1.3], 'flannel ADD': [1.3, 1.15], 'flannel DEL': [1.3, 1.15] };
    const figs = ['loopback ADD', 'bridge ADD', 'VERSION', 'flannel ADD', 'flannel DEL'];
    for (const fig of figs) {
      for (const s of sides) {
        const xs = samples.get(`${s.label} ${fig}`) ?? [];
        const v = median(xs);
        const target = targets[fig]?.[s.label.startsWith('standalone') ? 1 : 0];
        const row: BenchResult = { name: `${fig} ${s.label}`, value: round(v), unit: `ms (p90 ${round(quantile(xs, 0.9))})`, baseline: 'node -e 0', ratio: round(v / nodeMs) };
        if (target !== undefined) Object.assign(row, { target: `<= ${target}`, ok: v / nodeMs <= target });
        rows.push(row);
      }
    }
    for (const fig of figs) {
      for (const s of sides) {
        const v = median(samples.get(`CPU ${s.label} ${fig}`) ?? []);
        rows.push({ name: `CPU ${fig} ${s.label}`, value: round(v), unit: 'ms', baseline: 'CPU node -e 0', ratio: round(v / nodeCpu) });
      }
    }
    rows.push({ name: 'load average (1 min) at start / end', value: load0, unit: `/ ${loadAverage()}` });
    return rows;
  } finally {
    for (const s of sides) {
      s.pod.remove();
      s.node.remove();
      s.flannelPod.remove();
      s.flannelNode.remove();
      rmSync(s.dataDir, { recursive: true, force: true });
    }
    for (const d of dirs) d.remove();
  }
}

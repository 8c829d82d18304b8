// Benchmark: loopback ADD and VERSION wall time against `node -e 0`, measured in the same run.
import { existsSync } from 'node:fs';
import { benchNetns } from './netns.ts';
import { distBin, loadAverage, measureOnce, median, NODE_BASELINE, round, timeInterleaved, withCpuReport, type BenchResult, type Command } from './util.ts';

const REFERENCE = '/usr/lib/cni/loopback';

/** Runs the loopback benchmark in a namespace of its own; needs root and a built dist/bin/loopback. */
export function benchLoopback(runs = 30): BenchResult[] {
  const ns = benchNetns();
  try {
    const conf = JSON.stringify({ cniVersion: '1.0.0', name: 'lo', type: 'loopback' });
    const env = (bin: string, command: string): Command => ({
      cmd: bin,
      args: [],
      input: conf,
      env: { PATH: process.env.PATH, CNI_COMMAND: command, CNI_CONTAINERID: 'bench', CNI_NETNS: ns.path, CNI_IFNAME: 'lo', CNI_PATH: '/usr/lib/cni' },
    });
    const ours = distBin('loopback');
    const commands: Command[] = [NODE_BASELINE, env(ours, 'ADD'), env(ours, 'VERSION')];
    const hasRef = existsSync(REFERENCE);
    if (hasRef) commands.push(env(REFERENCE, 'ADD'));
    const load0 = loadAverage();
    const samples = timeInterleaved(commands, runs).map(median);
    // CPU rounds (node's CPU time at exit): steadier than wall time when other work loads the machine.
    const cpu = [NODE_BASELINE, env(ours, 'ADD'), env(ours, 'VERSION')].map(() => [] as number[]);
    for (let i = 0; i < runs; i++) {
      [NODE_BASELINE, env(ours, 'ADD'), env(ours, 'VERSION')].forEach((c, j) => cpu[j]?.push(measureOnce(withCpuReport(c)).cpuMs));
    }
    const [cBase = NaN, cAdd = NaN, cVersion = NaN] = cpu.map(median);
    const [base = NaN, add = NaN, version = NaN, ref] = samples;
    const rows: BenchResult[] = [
      { name: 'node -e 0', value: round(base), unit: 'ms' },
      { name: 'loopback ADD', value: round(add), unit: 'ms', baseline: 'node -e 0', ratio: round(add / base), target: '<= 1.3', ok: add / base <= 1.3 },
      { name: 'loopback VERSION (start-up)', value: round(version), unit: 'ms', baseline: 'node -e 0', ratio: round(version / base) },
    ];
    rows.push(
      { name: 'CPU node -e 0 (user+sys, all threads)', value: round(cBase), unit: 'ms' },
      { name: 'CPU loopback ADD', value: round(cAdd), unit: 'ms', baseline: 'CPU node -e 0', ratio: round(cAdd / cBase) },
      { name: 'CPU loopback VERSION', value: round(cVersion), unit: 'ms', baseline: 'CPU node -e 0', ratio: round(cVersion / cBase) },
      { name: 'load average (1 min) at start / end', value: load0, unit: `/ ${loadAverage()}` },
    );
    if (ref !== undefined) rows.push({ name: 'reference loopback ADD (Go)', value: round(ref), unit: 'ms', baseline: 'node -e 0', ratio: round(ref / base) });
    return rows;
  } finally {
    ns.remove();
  }
}

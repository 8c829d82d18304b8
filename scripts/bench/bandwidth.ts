// Benchmark: bandwidth ADD against `node -e 0` (both through `ip netns exec` with a clean env,
// interleaved), the reference Go bandwidth beside it, and the node's qdiscs and ifbs with 1 pod
// against `pods` pods (constant per pod), plus whether ADD slows down as pods accumulate.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { benchNetns } from './netns.ts';
import { nsCommand, nsExecSync, distBin, loadAverage, measureOnce, median, round, timeOnce, withCpuReport, type BenchResult, type Command } from './util.ts';

const REFERENCE = '/usr/lib/cni/bandwidth';
const LIMITS = { ingressRate: 20_000_000, ingressBurst: 2_000_000, egressRate: 10_000_000, egressBurst: 1_000_000 };

/** Host veth `h<p>` in the node netns, its peer `e<p>` in the pod netns (one pod netns holds every peer). */
function addPair(node: string, pod: string, p: number): void {
  execFileSync('ip', ['-n', node, 'link', 'add', `h${p}`, 'type', 'veth', 'peer', 'name', `e${p}`, 'netns', pod]);
  execFileSync('ip', ['-n', node, 'link', 'set', `h${p}`, 'up']);
}

function invoke(node: string, bin: string, command: string, p: number, podPath: string): Command {
  const prevResult = { cniVersion: '1.0.0', interfaces: [{ name: `h${p}` }, { name: `e${p}`, sandbox: podPath }], ips: [] };
  const env = { PATH: process.env['PATH'], CNI_COMMAND: command, CNI_CONTAINERID: `bench-${p}`, CNI_NETNS: podPath, CNI_IFNAME: `e${p}`, CNI_PATH: '/usr/lib/cni' };
  return nsCommand(node, [bin], { env, input: JSON.stringify({ cniVersion: '1.0.0', name: 'bench-bw', type: 'bandwidth', ...LIMITS, prevResult }) });
}

/** Non-default qdiscs and ifb devices of a namespace. */
function countTc(node: string): { qdiscs: number; ifbs: number } {
  const q = JSON.parse(nsExecSync(node, ['tc', '-j', 'qdisc', 'show']) || '[]') as Array<{ handle: string }>;
  const l = JSON.parse(execFileSync('ip', ['-n', node, '-j', 'link', 'show', 'type', 'ifb'], { encoding: 'utf8' }) || '[]') as unknown[];
  return { qdiscs: q.filter((x) => x.handle !== '0:').length, ifbs: l.length };
}

/** Runs the bandwidth benchmark. */
export function benchBandwidth(pods = 20, runs = 15): BenchResult[] {
  const ours = distBin('bandwidth');
  const node = benchNetns();
  const pod = benchNetns();
  try {
    for (let p = 0; p < pods; p++) addPair(node.name, pod.name, p);
    const base: Command = nsCommand(node.name, ['node', '-e', '0'], { env: { PATH: process.env.PATH } });
    const ref = existsSync(REFERENCE) ? REFERENCE : undefined;
    const load0 = loadAverage();
    // Interleaved: node -e 0, our ADD (then an untimed DEL), the reference's ADD (then its DEL), on pod 0.
    const s = { base: [] as number[], ours: [] as number[], ref: [] as number[] };
    for (let i = 0; i < runs + 3; i++) {
      const b = timeOnce(base);
      const o = timeOnce(invoke(node.name, ours, 'ADD', 0, pod.path));
      timeOnce(invoke(node.name, ours, 'DEL', 0, pod.path));
      const r = ref === undefined ? NaN : timeOnce(invoke(node.name, ref, 'ADD', 0, pod.path));
      if (ref !== undefined) timeOnce(invoke(node.name, ref, 'DEL', 0, pod.path));
      if (i >= 3) { s.base.push(b); s.ours.push(o); s.ref.push(r); }
    }
    const b = median(s.base);
    const a = median(s.ours);
    const rows: BenchResult[] = [
      { name: 'ip netns exec node -e 0', value: round(b), unit: 'ms' },
      { name: 'bandwidth ADD (ingress + egress: tbf, ifb, redirect)', value: round(a), unit: 'ms', baseline: 'node -e 0', ratio: round(a / b), target: '<= 1.3', ok: a / b <= 1.3 },
    ];
    if (ref !== undefined) rows.push({ name: 'reference bandwidth ADD (Go)', value: round(median(s.ref)), unit: 'ms', baseline: 'node -e 0', ratio: round(median(s.ref) / b) });
    // CPU rounds (node's CPU time at exit, kernel work in its syscalls included): steadier than wall time on a loaded machine.
    const cpu = { base: [] as number[], add: [] as number[] };
    for (let i = 0; i < runs; i++) {
      cpu.base.push(measureOnce(withCpuReport(base)).cpuMs);
      cpu.add.push(measureOnce(withCpuReport(invoke(node.name, ours, 'ADD', 0, pod.path))).cpuMs);
      timeOnce(invoke(node.name, ours, 'DEL', 0, pod.path));
    }
    rows.push(
      { name: 'CPU node -e 0 (user+sys)', value: round(median(cpu.base)), unit: 'ms' },
      { name: 'CPU bandwidth ADD', value: round(median(cpu.add)), unit: 'ms', baseline: 'CPU node -e 0', ratio: round(median(cpu.add) / median(cpu.base)) },
      { name: 'load average (1 min) at start / end', value: load0, unit: `/ ${loadAverage()}` },
    );
    // Pods accumulate: tc objects per pod, and ADD time of the last pods against the first.
    const times: number[] = [];
    let one = { qdiscs: 0, ifbs: 0 };
    for (let p = 0; p < pods; p++) {
      times.push(timeOnce(invoke(node.name, ours, 'ADD', p, pod.path)));
      if (p === 0) one = countTc(node.name);
    }
    const all = countTc(node.name);
    for (let p = 0; p < pods; p++) timeOnce(invoke(node.name, ours, 'DEL', p, pod.path));
    const left = countTc(node.name);
    const perPod = all.qdiscs / pods;
    rows.push(
      { name: `qdiscs with ${pods} pods`, value: all.qdiscs, unit: 'qdiscs', baseline: `${one.qdiscs} with 1 pod`, ratio: round(perPod / Math.max(1, one.qdiscs)), target: '= 1 (per pod)', ok: perPod === one.qdiscs },
      { name: `ifb devices with ${pods} pods`, value: all.ifbs, unit: 'links', baseline: `${one.ifbs} with 1 pod`, ratio: round(all.ifbs / pods / Math.max(1, one.ifbs)), target: '= 1 (per pod)', ok: all.ifbs === pods * one.ifbs },
      { name: `ADD of the last 5 of ${pods} pods`, value: round(median(times.slice(-5))), unit: 'ms', baseline: 'ADD of the first 5', ratio: round(median(times.slice(-5)) / median(times.slice(0, 5))), target: '<= 1.1', ok: median(times.slice(-5)) / median(times.slice(0, 5)) <= 1.1 },
      { name: `left after DEL of all ${pods}`, value: left.qdiscs + left.ifbs, unit: 'qdiscs + ifbs', target: '= 0', ok: left.qdiscs + left.ifbs === 0 },
    );
    return rows;
  } finally {
    pod.remove();
    node.remove();
  }
}

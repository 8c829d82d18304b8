// Benchmark: tuning ADD (mtu + one sysctl on a veth in a pod namespace, state saved) against
// `node -e 0`, both through `ip netns exec <node>`, interleaved. Needs root.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchNetns } from './netns.ts';
import { nsCommand, distBin, measureOnce, median, round, timeInterleaved, withCpuReport, type BenchResult, type Command } from './util.ts';

/** Runs the tuning benchmark in namespaces of its own. */
export function benchTuning(runs = 30): BenchResult[] {
  const ours = distBin('tuning');
  const node = benchNetns();
  const pod = benchNetns();
  const dataDir = mkdtempSync(join(tmpdir(), 'weft-bench-tuning-'));
  try {
    execFileSync('ip', ['-n', pod.name, 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'peer0']);
    const input = JSON.stringify({
      cniVersion: '1.0.0', name: 'bench-tuning', type: 'tuning', dataDir, mtu: 1400, sysctl: { 'net.ipv4.conf.IFNAME.arp_notify': '1' },
      prevResult: { cniVersion: '1.0.0', interfaces: [{ name: 'eth0', sandbox: pod.path }], ips: [] },
    });
    const env = { PATH: process.env['PATH'], CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'bench-tuning', CNI_NETNS: pod.path, CNI_IFNAME: 'eth0', CNI_PATH: '/usr/lib/cni' };
    const add: Command = nsCommand(node.name, [ours], { env, input });
    const baseline: Command = nsCommand(node.name, ['node', '-e', '0'], { env: { PATH: process.env.PATH } });
    const [base = NaN, a = NaN] = timeInterleaved([baseline, add], runs).map(median);
    // CPU time (user + system of the node processes): steadier than wall time on a loaded machine.
    const [cBase = NaN, cAdd = NaN] = [baseline, add].map((c) => median(Array.from({ length: runs }, () => measureOnce(withCpuReport(c)).cpuMs)));
    return [
      { name: 'ip netns exec node -e 0', value: round(base), unit: 'ms' },
      { name: 'tuning ADD (mtu + 1 sysctl, state saved)', value: round(a), unit: 'ms', baseline: 'node -e 0', ratio: round(a / base), target: '<= 1.3', ok: a / base <= 1.3 },
      { name: 'CPU tuning ADD (user+sys)', value: round(cAdd), unit: 'ms', baseline: `CPU node -e 0 (${round(cBase)} ms)`, ratio: round(cAdd / cBase) },
    ];
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    pod.remove();
    node.remove();
  }
}

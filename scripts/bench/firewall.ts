// Benchmark: firewall ADD wall time against `node -e 0`, both through `ip netns exec <node>`, interleaved,
// on a node whose iptables-nft FORWARD policy is DROP (so every ADD also checks the hooks); and the
// node's rule count with 1 pod vs `pods` pods (constant: pods only add set elements). Needs root.
import { benchNetns } from './netns.ts';
import { nsCommand, nsExecSync, distBin, measureOnce, median, round, timeInterleaved, withCpuReport, timeOnce, type BenchResult, type Command } from './util.ts';

function prevResult(pod: number): unknown {
  return { cniVersion: '1.0.0', interfaces: [{ name: 'cni0' }, { name: 'eth0', sandbox: '/var/run/netns/x' }], ips: [{ address: `10.78.${pod >> 8}.${(pod & 255) + 2}/16`, interface: 1 }] };
}

function invoke(node: string, bin: string, command: string, pod: number): Command {
  const input = JSON.stringify({ cniVersion: '1.0.0', name: 'bench-fw', type: 'firewall', backend: 'iptables', prevResult: prevResult(pod) });
  const env = { PATH: process.env['PATH'], CNI_COMMAND: command, CNI_CONTAINERID: `bench-fw-${pod}`, CNI_NETNS: '/var/run/netns/x', CNI_IFNAME: 'eth0', CNI_PATH: '/usr/lib/cni' };
  return nsCommand(node, [bin], { env, input });
}

function countRules(ns: string): number {
  const out = nsExecSync(ns, ['nft', '-j', 'list', 'ruleset']);
  return (JSON.parse(out) as { nftables: Array<Record<string, unknown>> }).nftables.filter((i) => 'rule' in i).length;
}

/** Runs the firewall benchmark in namespaces of its own. */
export function benchFirewall(runs = 30, pods = 20): BenchResult[] {
  const ours = distBin('firewall');
  const node = benchNetns();
  const pod = benchNetns();
  try {
    nsExecSync(node.name, ['iptables', '-P', 'FORWARD', 'DROP']);
    const fix = (c: Command): Command => ({ ...c, env: { ...c.env, CNI_NETNS: pod.path } });
    const baseline: Command = nsCommand(node.name, ['node', '-e', '0'], { env: { PATH: process.env.PATH } });
    // First ADD sets the rule set up (one nft process); the timed ADDs are the steady state.
    timeOnce(fix(invoke(node.name, ours, 'ADD', 0)));
    const rulesOne = countRules(node.name);
    const [base = NaN, add = NaN] = timeInterleaved([baseline, fix(invoke(node.name, ours, 'ADD', 0))], runs).map(median);
    // CPU time (user + system of the node processes): steadier than wall time on a loaded machine.
    const [cBase = NaN, cAdd = NaN] = [baseline, fix(invoke(node.name, ours, 'ADD', 0))].map((c) => median(Array.from({ length: runs }, () => measureOnce(withCpuReport(c)).cpuMs)));
    for (let p = 1; p < pods; p++) timeOnce(fix(invoke(node.name, ours, 'ADD', p)));
    const rulesAll = countRules(node.name);
    const del = median(Array.from({ length: pods }, (_, p) => timeOnce(fix(invoke(node.name, ours, 'DEL', p)))));
    return [
      { name: 'ip netns exec node -e 0', value: round(base), unit: 'ms' },
      { name: 'firewall ADD (steady state, FORWARD DROP hooked)', value: round(add), unit: 'ms', baseline: 'node -e 0', ratio: round(add / base), target: '<= 1.3', ok: add / base <= 1.3 },
      { name: 'CPU firewall ADD (user+sys)', value: round(cAdd), unit: 'ms', baseline: `CPU node -e 0 (${round(cBase)} ms)`, ratio: round(cAdd / cBase) },
      { name: `firewall DEL, median of ${pods} pods`, value: round(del), unit: 'ms', baseline: 'node -e 0', ratio: round(del / base) },
      { name: `firewall rules with ${pods} pods`, value: rulesAll, unit: 'rules', baseline: `${rulesOne} rules with 1 pod`, ratio: round(rulesAll / Math.max(1, rulesOne)), target: '= 1', ok: rulesAll === rulesOne },
    ];
  } finally {
    pod.remove();
    node.remove();
  }
}

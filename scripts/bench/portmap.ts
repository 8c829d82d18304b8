// Benchmark: portmap ADD/DEL wall time per pod and the ruleset's rule count with 1 pod vs `pods` pods
// of `mappings` mappings each, ours against the reference Go portmap (iptables chains per container),
// each in a namespace of its own, next to `node -e 0` run the same way. Needs root and dist/bin/portmap.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { benchNetns } from './netns.ts';
import { nsCommand, nsExecSync, distBin, median, round, timeOnce, type BenchResult, type Command } from './util.ts';

const REFERENCE = '/usr/lib/cni/portmap';

interface Sample {
  add: number[];
  del: number[];
  rulesOne: number;
  rulesAll: number;
}

function conf(pod: number, mappings: number): string {
  const portMappings = Array.from({ length: mappings }, (_, m) => ({ hostPort: 20000 + pod * 10 + m, containerPort: 8000 + m, protocol: m % 2 === 0 ? 'tcp' : 'udp' }));
  const prevResult = {
    cniVersion: '1.0.0',
    interfaces: [{ name: 'br0' }, { name: 'eth0', sandbox: '/var/run/netns/bench-pod' }],
    ips: [{ address: `10.77.0.${10 + pod}/24`, gateway: '10.77.0.1', interface: 1 }],
  };
  return JSON.stringify({ cniVersion: '1.0.0', name: 'bench-pm', type: 'portmap', snat: true, runtimeConfig: { portMappings }, prevResult });
}

function invoke(ns: string, bin: string, command: string, pod: number, mappings: number, podNs: string): Command {
  const env = { PATH: process.env['PATH'], CNI_COMMAND: command, CNI_CONTAINERID: `bench-${pod}`, CNI_NETNS: podNs, CNI_IFNAME: 'eth0', CNI_PATH: '/usr/lib/cni' };
  return nsCommand(ns, [bin], { env, input: conf(pod, mappings) });
}

/** Every rule of the namespace's whole ruleset (ours: inet weft; the reference's: ip/ip6 nat via iptables-nft). */
function countRules(ns: string): number {
  const out = nsExecSync(ns, ['nft', '-j', 'list', 'ruleset']);
  return (JSON.parse(out) as { nftables: Array<Record<string, unknown>> }).nftables.filter((i) => 'rule' in i).length;
}

function runOne(bin: string, pods: number, mappings: number, podNs: string): Sample {
  const ns = benchNetns();
  try {
    // The pod subnet's route, so the 127.0.0.1 step finds its interface as on a real node.
    for (const args of [['link', 'set', 'lo', 'up'], ['link', 'add', 'br0', 'type', 'bridge'], ['addr', 'add', '10.77.0.1/24', 'dev', 'br0'], ['link', 'set', 'br0', 'up']]) {
      execFileSync('ip', ['-n', ns.name, ...args]);
    }
    const s: Sample = { add: [], del: [], rulesOne: 0, rulesAll: 0 };
    for (let p = 0; p < pods; p++) {
      s.add.push(timeOnce(invoke(ns.name, bin, 'ADD', p, mappings, podNs)));
      if (p === 0) s.rulesOne = countRules(ns.name);
    }
    s.rulesAll = countRules(ns.name);
    for (let p = 0; p < pods; p++) s.del.push(timeOnce(invoke(ns.name, bin, 'DEL', p, mappings, podNs)));
    return s;
  } finally {
    ns.remove();
  }
}

/** Runs the portmap benchmark; figures are medians over the pods, ratios against node -e 0 in a netns. */
export function benchPortmap(pods = 20, mappings = 5): BenchResult[] {
  const ours = distBin('portmap');
  const podNs = benchNetns();
  const base = benchNetns();
  try {
    const baseline = median(Array.from({ length: 15 }, () => timeOnce(nsCommand(base.name, ['node', '-e', '0'], { env: { PATH: process.env.PATH } }))));
    const rows: BenchResult[] = [{ name: 'ip netns exec node -e 0', value: round(baseline), unit: 'ms' }];
    const add = (label: string, s: Sample): void => {
      const a = median(s.add);
      const d = median(s.del);
      rows.push({ name: `${label} ADD (${mappings} mappings), median of ${pods} pods`, value: round(a), unit: 'ms', baseline: 'node -e 0', ratio: round(a / baseline) });
      rows.push({ name: `${label} DEL, median of ${pods} pods`, value: round(d), unit: 'ms', baseline: 'node -e 0', ratio: round(d / baseline) });
      rows.push({ name: `${label} rules with ${pods} pods x ${mappings} mappings`, value: s.rulesAll, unit: 'rules', baseline: `${s.rulesOne} rules with 1 pod`, ratio: round(s.rulesAll / Math.max(1, s.rulesOne)), ...(label === 'portmap' ? { target: '= 1', ok: s.rulesAll === s.rulesOne } : {}) });
    };
    add('portmap', runOne(ours, pods, mappings, podNs.path));
    if (existsSync(REFERENCE)) add('reference portmap (Go, iptables)', runOne(REFERENCE, pods, mappings, podNs.path));
    return rows;
  } finally {
    base.remove();
    podNs.remove();
  }
}

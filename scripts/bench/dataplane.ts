// Cross-node pod-to-pod TCP throughput (iperf3, one stream and 4 in parallel) through weft's vxlan and
// host-gw data planes, next to the same topology built by hand with `ip` commands (bridge, veth, VTEP
// with learning off, permanent neighbour + FDB + onlink route; or a plain route for host-gw) on the
// same underlay, with the kernel's default offloads. weft runs three ways: no NAT at all, default
// flags (the bridge masquerades, the cluster Network exempt), and weftd --ip-masq. The no-NAT path is
// compared with the bare hand-built one, the NAT paths with the hand-built one plus a one-rule nft
// masquerade (so both sides pay conntrack, which any masquerading CNI needs). Runs alternate so
// machine load hits all alike; each round's ratios are paired, and their medians compared.
import { execFileSync } from 'node:child_process';
import { vtepMac } from '../../lib/flannel/vtep.ts';
import { Cluster } from '../../testkit/cluster.ts';
import { Topology, nsRun } from '../../testkit/topology.ts';
import { createIperf } from './iperf.ts';
import { loadAverage, median, round, type BenchResult } from './util.ts';

const ROUNDS = Number(process.env['WEFT_BENCH_ROUNDS'] ?? 5);
const SECONDS = Number(process.env['WEFT_BENCH_SECONDS'] ?? 4);
const iperf = createIperf(SECONDS, 7201);

/** Client and server pod namespaces, and the node namespaces they sit on (for diagnostics). */
export interface Path { client: string; server: string; serverIp: string; nodes: string[]; destroy: () => void }

/** The hand-built pods' Network: masquerade what leaves it, as flannel's ip-masq rule does. */
const HAND_NET = '10.245.0.0/16';

/**
 * The NAT baseline's ruleset (node netns): one nat postrouting chain with one masquerade rule. A nat
 * hook makes conntrack track every packet of the namespace; the rule itself runs once per connection.
 */
export function handMasqRuleset(net = HAND_NET): string {
  return `add table ip handmasq; add chain ip handmasq post { type nat hook postrouting priority srcnat; policy accept; }; `
    + `add rule ip handmasq post ip saddr ${net} ip daddr != ${net} masquerade`;
}

/**
 * Two nodes wired by hand the way weft wires them: pod <-veth-> cni0, and vxlan or host-gw between
 * nodes; with `masq`, each node also gets handMasqRuleset (the NAT rows' baseline).
 */
export async function handBuilt(backend: 'vxlan' | 'host-gw', masq = false): Promise<Path> {
  const t = await Topology.create({ nodes: 2 });
  try {
    const mtu = backend === 'vxlan' ? 1450 : 1500;
    const sub = (id: number) => `10.245.${id}`;
    const pods: string[] = [];
    for (const n of t.nodes) {
      const run = (...cmd: string[]) => nsRun(n.netns, cmd);
      await run('ip', 'link', 'add', 'cni0', 'type', 'bridge');
      await run('ip', 'addr', 'add', `${sub(n.id)}.1/24`, 'dev', 'cni0');
      await run('ip', 'link', 'set', 'cni0', 'up');
      const pod = await t.addPod(n, 1);
      pods.push(pod.netns);
      await run('ip', 'link', 'add', 'vethbench', 'mtu', String(mtu), 'type', 'veth', 'peer', 'name', 'eth0', 'mtu', String(mtu), 'netns', pod.netns);
      await run('ip', 'link', 'set', 'vethbench', 'master', 'cni0', 'up');
      await nsRun(pod.netns, ['ip', 'link', 'set', 'lo', 'up']);
      await nsRun(pod.netns, ['ip', 'addr', 'add', `${sub(n.id)}.2/24`, 'dev', 'eth0']);
      await nsRun(pod.netns, ['ip', 'link', 'set', 'eth0', 'up']);
      await nsRun(pod.netns, ['ip', 'route', 'add', 'default', 'via', `${sub(n.id)}.1`]);
      if (backend === 'vxlan') {
        await run('ip', 'link', 'add', 'flannel.1', 'address', vtepMac(n.ip, 1), 'type', 'vxlan', 'id', '1', 'local', n.ip, 'dev', 'eth0', 'dstport', '8472', 'nolearning');
        await run('ip', 'link', 'set', 'flannel.1', 'mtu', String(mtu), 'up');
        await run('ip', 'addr', 'add', `${sub(n.id)}.0/32`, 'dev', 'flannel.1');
        // The kernel's default offloads are kept: the baseline is what the kernel does on its own.
      }
      if (masq) await run('nft', handMasqRuleset());
    }
    for (const n of t.nodes) {
      for (const p of t.nodes.filter((x) => x !== n)) {
        const run = (...cmd: string[]) => nsRun(n.netns, cmd);
        if (backend === 'vxlan') {
          await run('ip', 'neigh', 'add', `${sub(p.id)}.0`, 'lladdr', vtepMac(p.ip, 1), 'dev', 'flannel.1', 'nud', 'permanent');
          await run('bridge', 'fdb', 'add', vtepMac(p.ip, 1), 'dev', 'flannel.1', 'dst', p.ip, 'self', 'permanent');
          await run('ip', 'route', 'add', `${sub(p.id)}.0/24`, 'via', `${sub(p.id)}.0`, 'dev', 'flannel.1', 'onlink');
        } else {
          await run('ip', 'route', 'add', `${sub(p.id)}.0/24`, 'via', p.ip, 'dev', 'eth0');
        }
      }
    }
    return { client: pods[0] ?? '', server: pods[1] ?? '', serverIp: `${sub(2)}.2`, nodes: t.nodes.map((n) => n.netns), destroy: () => t.destroySync() };
  } catch (e) {
    t.destroySync();
    throw e;
  }
}

export type Variant = 'plain' | 'bridge-masq' | 'ip-masq';

/**
 * Two weft nodes (weftd + flannel plugin + bridge + host-local, built binaries), one pod each.
 * plain: no NAT anywhere (delegate ipMasq false, weftd without --ip-masq), the hand-built data path.
 * bridge-masq: weftd's default flags, the bridge masquerades traffic leaving the Network.
 * ip-masq: weftd --ip-masq as flannel is usually deployed. Both NAT variants put a nat hook on the
 * path, so conntrack tracks every packet: a cost any flannel-style setup pays.
 */
export async function weftBuilt(backend: 'vxlan' | 'host-gw', v: Variant): Promise<Path> {
  const c = await Cluster.create({ backend, store: 'file', nodes: 2, podsPerNode: 1, ipMasq: v === 'ip-masq', ...(v === 'plain' ? { delegate: { ipMasq: false } } : {}) });
  const [a, b] = c.pods;
  if (!a || !b) throw new Error('weft cluster has no pods');
  return { client: a.netns, server: b.netns, serverIp: b.ip, nodes: c.nodes.map((n) => n.netns), destroy: () => c.destroy() };
}

/** Each weft variant, its target and its baseline: the bare hand-built path, or the one with conntrack + masquerade. */
const VARIANTS: ReadonlyArray<{ v: Variant; label: string; target: number; masq: boolean }> = [
  { v: 'plain', label: 'no NAT', target: 0.95, masq: false },
  { v: 'bridge-masq', label: 'default flags (bridge masquerade, Network exempt)', target: 0.9, masq: true },
  { v: 'ip-masq', label: 'weftd --ip-masq', target: 0.9, masq: true },
];

/** Rounds of the weft variants and the hand-built paths, order rotated each round; Gbit/s per path. */
async function measure(paths: Path[], streams: number): Promise<number[][]> {
  const out = paths.map(() => [] as number[]);
  for (let i = 0; i < ROUNDS; i++) {
    // Rotate the order each round so that a position effect cannot favour one side.
    for (let j = 0; j < paths.length; j++) {
      const k = (i + j) % paths.length;
      const p = paths[k] as Path;
      out[k]?.push(await iperf.gbps(p.client, p.server, p.serverIp, streams));
    }
  }
  return out;
}

/**
 * Per-round ratios a[r] / b[r]: each round's runs are seconds apart, so the median of these cancels
 * the load drift of a shared machine better than a ratio of medians.
 */
function paired(a: number[], b: number[]): number[] {
  return a.map((g, r) => g / (b[r] ?? NaN));
}

/** "min-max" of the samples: the spread beside a median. */
function spread(xs: number[], digits = 2): string {
  return `${round(Math.min(...xs), digits)}-${round(Math.max(...xs), digits)}`;
}

/** The dataplane benchmark rows: per backend and stream count, each weft variant vs its hand-built baseline (median of paired ratios). */
export async function benchDataplane(): Promise<BenchResult[]> {
  execFileSync('iperf3', ['--version'], { stdio: 'ignore' });
  const rows: BenchResult[] = [];
  const backends = (process.env['WEFT_BENCH_BACKENDS'] ?? 'vxlan,host-gw').split(',').filter((b): b is 'vxlan' | 'host-gw' => b === 'vxlan' || b === 'host-gw');
  const streamCounts = (process.env['WEFT_BENCH_STREAMS'] ?? '1,4').split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0);
  for (const backend of backends) {
    const paths: Path[] = [];
    const load0 = loadAverage();
    try {
      for (const { v } of VARIANTS) paths.push(await weftBuilt(backend, v));
      paths.push(await handBuilt(backend), await handBuilt(backend, true));
      for (const streams of streamCounts) {
        const samples = await measure(paths, streams);
        const [h, hm] = [samples[VARIANTS.length] ?? [], samples[VARIANTS.length + 1] ?? []];
        const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ');
        process.stderr.write(`  ${backend} -P ${streams}: ${VARIANTS.map((x, i) => `${x.v} ${fmt(samples[i] ?? [])}`).join(' | ')} | hand-built ${fmt(h)} | hand-built + masquerade ${fmt(hm)} Gbit/s\n`);
        const what = `${backend}, ${streams === 1 ? '1 stream' : `${streams} streams`}`;
        const tail = `iperf3 ${SECONDS} s, median of ${ROUNDS} interleaved rounds`;
        VARIANTS.forEach((x, i) => {
          const w = samples[i] ?? [];
          const [base, baseName] = x.masq ? [hm, 'hand-built + masquerade'] : [h, 'hand-built'];
          const ratios = paired(w, base);
          rows.push({
            name: `${what}: ${x.label} (${tail}, weft ${spread(w)}, ratio ${spread(ratios, 3)})`,
            value: round(median(w), 2), unit: 'Gbit/s', baseline: `${baseName} ${round(median(base), 2)} Gbit/s (${spread(base)})`,
            ratio: round(median(ratios), 3), target: `>= ${x.target}x`, ok: median(ratios) >= x.target,
          });
        });
        // What conntrack + masquerade cost the kernel's own path: the part of the NAT rows no CNI can avoid.
        const nat = paired(hm, h);
        rows.push({
          name: `${what}: hand-built + masquerade (conntrack on every packet) against hand-built (${tail}, ratio ${spread(nat, 3)})`,
          value: round(median(hm), 2), unit: 'Gbit/s', baseline: `hand-built ${round(median(h), 2)} Gbit/s`, ratio: round(median(nat), 3),
        });
      }
      rows.push({ name: `${backend}: 1-min load average at the start (end in the baseline column)`, value: load0, unit: '', baseline: `end ${loadAverage()}` });
    } finally {
      for (const p of paths) p.destroy();
    }
  }
  return rows;
}

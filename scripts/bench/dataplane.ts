// Cross-node pod-to-pod TCP throughput (iperf3, single stream) through weft's vxlan and host-gw
// data planes, next to the same topology built by hand with `ip` commands (bridge, veth, VTEP with
// learning off, permanent neighbour + FDB + onlink route; or a plain route for host-gw) on the same
// underlay. Runs alternate weft/hand-built so machine load hits both alike; medians are compared.
import { execFileSync } from 'node:child_process';
import { vtepMac } from '../../lib/flannel/vtep.ts';
import { Cluster } from '../../testkit/cluster.ts';
import { Topology, nsRun } from '../../testkit/topology.ts';
import { createIperf } from './iperf.ts';
import { median, round, type BenchResult } from './util.ts';

const ROUNDS = Number(process.env['WEFT_BENCH_ROUNDS'] ?? 5);
const SECONDS = Number(process.env['WEFT_BENCH_SECONDS'] ?? 4);
const iperf = createIperf(SECONDS, 7201);

interface Path { client: string; server: string; serverIp: string; destroy: () => void }

/** Two nodes wired by hand the way weft wires them: pod <-veth-> cni0, and vxlan or host-gw between nodes. */
async function handBuilt(backend: 'vxlan' | 'host-gw'): Promise<Path> {
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
        // Same as weftd: TX checksum offload off on the VTEP.
        await run('ethtool', '-K', 'flannel.1', 'tx', 'off');
      }
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
    return { client: pods[0] ?? '', server: pods[1] ?? '', serverIp: `${sub(2)}.2`, destroy: () => t.destroySync() };
  } catch (e) {
    t.destroySync();
    throw e;
  }
}

/**
 * Two weft nodes (weftd + flannel plugin + bridge + host-local, built binaries), one pod each.
 * `masq` false: no NAT anywhere (delegate ipMasq false, weftd without --ip-masq), the same data
 * path as the hand-built one. `masq` true: weftd --ip-masq as flannel is usually deployed; its nat
 * hook makes conntrack track every packet, which costs throughput on any flannel-style setup.
 */
async function weftBuilt(backend: 'vxlan' | 'host-gw', masq: boolean): Promise<Path> {
  const c = await Cluster.create({ backend, store: 'file', nodes: 2, podsPerNode: 1, ipMasq: masq, ...(masq ? {} : { delegate: { ipMasq: false } }) });
  const [a, b] = c.pods;
  if (!a || !b) throw new Error('weft cluster has no pods');
  return { client: a.netns, server: b.netns, serverIp: b.ip, destroy: () => c.destroy() };
}

/** The dataplane benchmark rows: per backend weft vs hand-built, median Gbit/s and the ratio. */
export async function benchDataplane(): Promise<BenchResult[]> {
  execFileSync('iperf3', ['--version'], { stdio: 'ignore' });
  const rows: BenchResult[] = [];
  const backends = (process.env['WEFT_BENCH_BACKENDS'] ?? 'vxlan,host-gw').split(',').filter((b): b is 'vxlan' | 'host-gw' => b === 'vxlan' || b === 'host-gw');
  for (const backend of backends) {
    const weft = await weftBuilt(backend, false);
    const masq = await weftBuilt(backend, true);
    const hand = await handBuilt(backend);
    try {
      const w: number[] = [];
      const m: number[] = [];
      const h: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        // Alternate the order each round so that a position effect cannot favour one side.
        const order = i % 2 === 0 ? [0, 1, 2] : [1, 2, 0];
        for (const k of order) {
          if (k === 0) w.push(await iperf.gbps(weft.client, weft.server, weft.serverIp));
          else if (k === 1) h.push(await iperf.gbps(hand.client, hand.server, hand.serverIp));
          else m.push(await iperf.gbps(masq.client, masq.server, masq.serverIp));
        }
      }
      const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ');
      process.stderr.write(`  ${backend}: weft ${fmt(w)} | weft --ip-masq ${fmt(m)} | hand-built ${fmt(h)} Gbit/s\n`);
      const base = `hand-built ${round(median(h), 2)} Gbit/s`;
      // Paired: each round's runs are seconds apart, so the median of per-round ratios cancels the
      // load drift of a shared machine better than a ratio of medians.
      const ratio = median(w.map((x, i) => x / (h[i] ?? NaN)));
      const masqRatio = median(m.map((x, i) => x / (h[i] ?? NaN)));
      rows.push({
        name: `${backend}: pod-to-pod TCP across nodes, no NAT (iperf3, ${SECONDS} s, median of ${ROUNDS}; ratio = median of per-round ratios)`, value: round(median(w), 2), unit: 'Gbit/s',
        baseline: base, ratio: round(ratio, 3), target: '>= 0.95x', ok: ratio >= 0.95,
      });
      rows.push({
        name: `${backend}: same with weftd --ip-masq (conntrack on every packet)`, value: round(median(m), 2), unit: 'Gbit/s',
        baseline: base, ratio: round(masqRatio, 3),
      });
    } finally {
      weft.destroy();
      masq.destroy();
      hand.destroy();
    }
  }
  return rows;
}

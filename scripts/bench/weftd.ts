// weftd benchmarks on a simulated 3-node vxlan cluster, with the file store and with etcd: join
// latency (a lease written to the store -> its route programmed on every node, p50/p99 over 50
// joins), idle RSS, and scale (1,000 remote leases written at once -> all programmed, and weftd's peak RSS). "Programmed" is observed as the
// kernel's RTM_NEWROUTE notification for the lease's subnet in each node namespace (the route is the
// last of neighbour, FDB, route), so the figure is kernel state, not a log line.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { formatLeaseFile, leasePath } from '../../agent/lease/file-lease-io.ts';
import { formatLeaseAttrs, formatSubnetKey } from '../../agent/lease/lease-json.ts';
import type { Lease } from '../../agent/lease/store.ts';
import { RTPROT_WEFT } from '../../agent/reconcile/desired.ts';
import { RtnlEvents } from '../../lib/netlink/index.ts';
import { openNetns, withNetns } from '../../lib/netns/index.ts';
import { vtepMac } from '../../lib/flannel/vtep.ts';
import { Cluster, waitFor } from '../../testkit/cluster.ts';
import { inNetns } from '../../testkit/netns.ts';
import { ROOT, quantile, median, round, type BenchResult } from './util.ts';

const JOINS = 50;
const MANY = 1000;

/** Subnet i of 10.0.0.0/8 in /24s, skipping the first 1,024 so real nodes never collide. */
function fakeLease(i: number): Lease {
  const n = 1024 + i;
  const publicIp = `198.18.${(n >> 8) & 255}.${n & 255}`;
  return {
    subnet: `10.${(n >> 8) & 255}.${n & 255}.0/24`, publicIp, backendType: 'vxlan',
    backendData: { VNI: 1, VtepMAC: vtepMac(publicIp, 1) }, expiration: Date.now() + 3_600_000,
  };
}

/** Every node's route notifications, timestamped as they arrive: subnet -> ms (performance.now). */
function watchRoutes(c: Cluster): { seen: Array<Map<string, number>>; overruns: () => number; close: () => void } {
  const seen = c.nodes.map(() => new Map<string, number>());
  let overruns = 0;
  const subs = c.nodes.map((n, i) => {
    const h = openNetns(n.path);
    try {
      // The socket is created inside the node's netns and stays bound to it (see lib/netns).
      const ev = withNetns(h, () => RtnlEvents.open(['ipv4-route']));
      ev.on((e) => {
        if (e.type === 'overrun') overruns++;
        if (e.type === 'newroute' && e.route?.protocol === RTPROT_WEFT) {
          const m = seen[i];
          if (m && !m.has(e.route.dst)) m.set(e.route.dst, performance.timeOrigin + performance.now());
        }
      });
      return ev;
    } finally {
      h.close();
    }
  });
  return { seen, overruns: () => overruns, close: () => subs.forEach((s) => s.close()) };
}

/** Writes leases into the cluster's store; resolves with the wall-clock ms just before the first write. */
interface LeaseWriter {
  write(leases: Lease[]): Promise<number>;
  close(): void;
}

/** File store: complete temp files first, then the renames back to back (as the store itself writes). */
function fileWriter(dir: string): LeaseWriter {
  let seq = 0;
  return {
    write: (leases) => {
      const commits = leases.map((l) => {
        const tmp = join(dir, `.bench-${seq++}`);
        writeFileSync(tmp, formatLeaseFile(l));
        return () => renameSync(tmp, leasePath(dir, l.subnet));
      });
      const t0 = performance.timeOrigin + performance.now();
      for (const f of commits) f();
      return Promise.resolve(t0);
    },
    close: () => undefined,
  };
}

/** etcd: flannel's keys and JSON, written by a helper process inside the etcd namespace. */
function etcdWriter(c: Cluster): LeaseWriter {
  if (!c.etcd) throw new Error('no etcd in this cluster');
  const [file = 'ip', ...args] = inNetns(c.etcd.netns, [process.execPath, '--import', 'tsx', join(ROOT, 'scripts', 'bench', 'etcd-writer.ts'), c.etcd.url]);
  const child = spawn(file, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const answers: Array<(t0: number) => void> = [];
  createInterface({ input: child.stdout }).on('line', (line) => answers.shift()?.((JSON.parse(line) as { t0: number }).t0));
  return {
    write: (leases) => new Promise((resolve) => {
      answers.push(resolve);
      const puts = leases.map((l) => [`/coreos.com/network/subnets/${formatSubnetKey(l.subnet)}`, formatLeaseAttrs(l)]);
      child.stdin.write(`${JSON.stringify({ puts })}\n`);
    }),
    close: () => { child.stdin.end(); },
  };
}

/** A /proc/PID/status memory line in MiB: VmHWM (peak RSS) or VmRSS (now). */
function statusMib(pid: number | undefined, key: 'VmHWM' | 'VmRSS'): number {
  if (pid === undefined) return NaN;
  const m = new RegExp(`${key}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** One store's rows. */
async function benchStore(store: 'file' | 'etcd'): Promise<BenchResult[]> {
  const c = await Cluster.create({ backend: 'vxlan', store, nodes: 3, podsPerNode: 0, network: '10.0.0.0/8', onProgress: (m) => process.stderr.write(`  ${m}\n`) });
  const w = watchRoutes(c);
  const writer = store === 'file' ? fileWriter(c.leaseDir) : etcdWriter(c);
  try {
    // Idle: the nodes hold their leases and see each other; nothing else happens for 3 s.
    await new Promise((r) => setTimeout(r, 3000));
    const idle = Math.max(...c.nodes.map((n) => statusMib(n.weftd?.pid, 'VmRSS')));
    const joins: number[] = [];
    for (let i = 0; i < JOINS; i++) {
      const l = fakeLease(i);
      const t0 = await writer.write([l]);
      await waitFor(`join ${i} programmed everywhere`, () => w.seen.every((m) => m.has(l.subnet)), 10_000, 2);
      joins.push(Math.max(...w.seen.map((m) => (m.get(l.subnet) ?? NaN) - t0)));
    }
    const many = Array.from({ length: MANY }, (_, i) => fakeLease(JOINS + i));
    const t0 = await writer.write(many);
    await waitFor(`${MANY} leases programmed everywhere`, () => w.seen.every((m) => many.every((l) => m.has(l.subnet))), 60_000, 20);
    const allMs = Math.max(...w.seen.map((m) => Math.max(...many.map((l) => (m.get(l.subnet) ?? NaN) - t0))));
    // A lost notification would leave a subnet unseen (the wait above times out), never fake a figure.
    if (w.overruns() > 0) process.stderr.write(`  note: ${w.overruns()} notification overruns (subnets were still all seen)\n`);
    const rss = Math.max(...c.nodes.map((n) => statusMib(n.weftd?.pid, 'VmHWM')));
    const p99 = quantile(joins, 0.99);
    process.stderr.write(`  ${store}: join latencies (ms, sorted): ${[...joins].sort((a, b) => a - b).map((x) => x.toFixed(0)).join(' ')}\n`);
    return [
      { name: `${store}: join, lease written -> programmed on all 3 nodes, p50 (${JOINS} joins)`, value: round(median(joins), 1), unit: 'ms' },
      { name: `${store}: join, lease written -> programmed on all 3 nodes, p99 (${JOINS} joins)`, value: round(p99, 1), unit: 'ms', target: '<= 200 ms', ok: p99 <= 200 },
      { name: `${store}: ${MANY} remote leases at once -> all programmed on all 3 nodes`, value: round(allMs / 1000, 2), unit: 's', target: '<= 5 s', ok: allMs <= 5000 },
      { name: `${store}: weftd idle RSS (2 peers)`, value: round(idle, 1), unit: 'MiB', target: '<= 50 MiB', ok: idle <= 50 },
      { name: `${store}: weftd peak RSS with ${MANY + JOINS + 2} remote leases`, value: round(rss, 1), unit: 'MiB', target: '<= 100 MiB', ok: rss <= 100 },
    ];
  } finally {
    writer.close();
    w.close();
    c.destroy();
  }
}

/** The weftd benchmark rows, file store then etcd (skipped when etcd is not installed). */
export async function benchWeftd(): Promise<BenchResult[]> {
  const rows = await benchStore('file');
  return existsSync('/usr/bin/etcd') ? [...rows, ...(await benchStore('etcd'))] : rows;
}

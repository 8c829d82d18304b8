// The per-packet cost of weftd --network-policy (part of `npm run bench -- netpol`): pod-to-pod TCP
// throughput (iperf3) and new-connection rate, same-node and cross-node on host-gw, with 0 vs 200
// policies selecting the pods. The 200 policies stay in the table in both states; the pods' labels
// decide whether they select them, so only selection differs between the two. The policy that allows
// the traffic sorts last, so a new connection walks every policy chain before it is accepted. States
// alternate round by round (paired ratios), as the data-plane bench does on a shared machine.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster, waitFor } from '../../testkit/cluster.ts';
import { nsExec } from '../../testkit/topology.ts';
import { POLICY_TABLE, SET_ISO_IN } from '../../agent/policy/desired.ts';
import { listRuleComments } from '../../lib/netfilter/nfnl/chains.ts';
import { formatKeyBytes } from '../../lib/netfilter/nfnl/key-codec.ts';
import { listSetElems, NfnlSocket } from '../../lib/netfilter/nfnl/index.ts';
import { openNetns, withNetns } from '../../lib/netns/index.ts';
import { createIperf } from './iperf.ts';
import { loadAverage, median, round, type BenchResult } from './util.ts';

const POLICIES = 200;
const ROUNDS = Number(process.env['WEFT_BENCH_NETPOL_ROUNDS'] ?? 4);
const SECONDS = 3;
const iperf = createIperf(SECONDS, 7301);

// Accepts and closes connections on port 7400; a client loop counts connections per second.
const SERVER_PY = `
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('0.0.0.0', 7400)); s.listen(1024)
while True:
    c, _ = s.accept(); c.close()
`;
const CONNECT_PY = `
import socket, sys, time
ip = sys.argv[1]; end = time.time() + float(sys.argv[2]); n = 0
while time.time() < end:
    s = socket.create_connection((ip, 7400), timeout=2); s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b'\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00'); s.close(); n += 1
print(n / float(sys.argv[2]))
`;

/** Reads weft's policy table of a node over nf_tables netlink, from this process (the socket is opened in the node's netns). */
export function nfnlIn(netns: string): { has(set: string, ip: string): boolean; hasChain(chain: string): boolean; close(): void } {
  const h = openNetns(`/run/netns/${netns}`);
  let sock: NfnlSocket;
  try {
    sock = withNetns(h, () => NfnlSocket.open());
  } finally {
    h.close();
  }
  return {
    has: (set, ip) => {
      const want = formatKeyBytes('ipv4_addr', ip).join(',');
      return (listSetElems(sock, POLICY_TABLE, set) ?? []).some((e) => e.key.join(',') === want);
    },
    hasChain: (chain) => listRuleComments(sock, 'inet', POLICY_TABLE.name, chain).length > 0,
    close: () => sock.close(),
  };
}

/** A kube client whose calls survive a loaded machine: a timed-out call is retried; a retried create that finds its object, or delete that finds none, succeeded before. */
export function patientKube(kube: NonNullable<Cluster['kube']>): { call(method: string, path: string, body?: unknown, contentType?: string): Promise<Record<string, unknown>> } {
  return {
    async call(method, path, body, contentType) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await kube.call(method, path, body, contentType);
        } catch (e) {
          const msg = (e as Error).message;
          if (attempt > 1 && ((method === 'POST' && msg.includes('AlreadyExists')) || (method === 'DELETE' && msg.includes('NotFound')))) return {};
          if (attempt >= 5 || !/timed out|\(28\)|\(7\)/.test(msg)) throw e;
          process.stderr.write(`  kube ${method} ${path} timed out, attempt ${attempt}; again\n`);
        }
      }
    },
  };
}

/** The throughput rows (see the module comment). */
export async function benchNetpolThroughput(): Promise<BenchResult[]> {
  const c = await Cluster.create({ backend: 'host-gw', store: 'kube', nodes: 2, podsPerNode: 2, delegate: { ipMasq: false }, weftdArgs: ['--network-policy'], onProgress: (m) => process.stderr.write(`  ${m}\n`) });
  const kernels: ReturnType<typeof nfnlIn>[] = [];
  try {
    const kube = c.kube === undefined ? undefined : patientKube(c.kube);
    const [n1, n2] = c.nodes;
    const client = c.pods.find((p) => p.node === n1);
    const same = c.pods.filter((p) => p.node === n1)[1];
    const cross = c.pods.find((p) => p.node === n2);
    if (kube === undefined || n1 === undefined || n2 === undefined || client === undefined || same === undefined || cross === undefined) throw new Error('cluster incomplete');
    await kube.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tp' } });
    await kube.call('POST', '/api/v1/namespaces/tp/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
    const roles: [string, typeof client][] = [['client', client], ['same', same], ['cross', cross]];
    for (const [name, p] of roles) {
      await kube.call('POST', '/api/v1/namespaces/tp/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'tp', labels: { role: name } }, spec: { nodeName: p.node.netns, automountServiceAccountToken: false, containers: [{ name: 'c', image: 'weft.invalid/none' }] } });
      await kube.call('PATCH', `/api/v1/namespaces/tp/pods/${name}/status`, { status: { phase: 'Running', podIP: p.ip, podIPs: [{ ip: p.ip }], hostIP: p.node.ip } }, 'application/merge-patch+json');
    }
    // 199 policies selecting sel=on pods in both directions and allowing what the pods never send,
    // then `zz-allow` (sorted last) allowing the bench's traffic.
    const sel = { matchLabels: { sel: 'on' } };
    for (let j = 0; j < POLICIES - 1; j++) {
      await kube.call('POST', '/apis/networking.k8s.io/v1/namespaces/tp/networkpolicies', { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: `p-${String(j).padStart(3, '0')}`, namespace: 'tp' }, spec: {
        podSelector: sel, policyTypes: ['Ingress', 'Egress'],
        ingress: [{ from: [{ podSelector: { matchLabels: { peer: `v${j}` } } }, { ipBlock: { cidr: `10.${100 + (j % 100)}.0.0/16` } }], ports: [{ port: 9000 + j }, { port: 'metrics' }] }],
        egress: [{ to: [{ podSelector: { matchLabels: { peer: `v${j}` } } }], ports: [{ port: 9000 + j, protocol: 'UDP' }] }],
      } });
    }
    await kube.call('POST', '/apis/networking.k8s.io/v1/namespaces/tp/networkpolicies', { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'zz-allow', namespace: 'tp' }, spec: {
      podSelector: sel, policyTypes: ['Ingress', 'Egress'], ingress: [{ from: [{ podSelector: { matchLabels: { role: 'client' } } }] }], egress: [{ to: [{ podSelector: {} }] }],
    } });
    for (const n of [n1, n2]) kernels.push(nfnlIn(n.netns));
    const [k1, k2] = kernels as [ReturnType<typeof nfnlIn>, ReturnType<typeof nfnlIn>];
    const setSelected = async (on: boolean): Promise<void> => {
      for (const [name] of roles) await kube.call('PATCH', `/api/v1/namespaces/tp/pods/${name}`, { metadata: { labels: { sel: on ? 'on' : 'off' } } }, 'application/merge-patch+json');
      await waitFor(`pods ${on ? '' : 'no longer '}isolated`, () => [k1.has(SET_ISO_IN, same.ip), k2.has(SET_ISO_IN, cross.ip)].every((x) => x === on), 60_000, 20);
    };
    const dir = c.topo.dir;
    writeFileSync(join(dir, 'tp-server.py'), SERVER_PY);
    writeFileSync(join(dir, 'tp-connect.py'), CONNECT_PY);
    for (const p of [same, cross]) c.topo.spawnIn(p.netns, ['python3', join(dir, 'tp-server.py')], join(dir, `tp-server-${p.netns}.log`));
    await new Promise((r) => setTimeout(r, 500));
    const connRate = async (ip: string): Promise<number> => {
      const r = await nsExec(client.netns, ['python3', join(dir, 'tp-connect.py'), ip, '2'], { timeoutMs: 30_000 });
      if (r.code !== 0) throw new Error(`connect loop to ${ip} failed: ${r.stderr.slice(0, 300)}`);
      return Number(r.stdout.trim());
    };
    const targets = [['same-node', same], ['cross-node', cross]] as const;
    const samples = new Map<string, { off: number[]; on: number[] }>();
    const note = (k: string, on: boolean, v: number) => {
      const s = samples.get(k) ?? { off: [], on: [] };
      (on ? s.on : s.off).push(v);
      samples.set(k, s);
    };
    for (let i = 0; i < ROUNDS; i++) {
      // Alternate which state goes first each round, so that neither gains from a position.
      for (const on of i % 2 === 0 ? [false, true] : [true, false]) {
        await setSelected(on);
        for (const [label, p] of targets) {
          note(`${label} TCP throughput`, on, await iperf.gbps(client.netns, p.netns, p.ip));
          note(`${label} new connections`, on, await connRate(p.ip));
        }
      }
    }
    const load = `load ${round(loadAverage())}`;
    const rows: BenchResult[] = [];
    for (const [k, s] of samples) {
      const ratio = median(s.on.map((v, r) => v / (s.off[r] ?? NaN)));
      const unit = k.endsWith('throughput') ? 'Gbit/s' : 'conn/s';
      process.stderr.write(`  ${k}: 0 policies ${s.off.map((x) => x.toFixed(2)).join(' ')} | ${POLICIES} ${s.on.map((x) => x.toFixed(2)).join(' ')} ${unit}\n`);
      rows.push({
        name: `${k}, ${POLICIES} policies selecting both pods (median of ${ROUNDS}, ${load})`, value: round(median(s.on), 2), unit,
        baseline: `0 policies ${round(median(s.off), 2)} ${unit}`, ratio: round(ratio, 3), target: '>= 0.95x', ok: ratio >= 0.95,
      });
    }
    return rows;
  } finally {
    for (const k of kernels) k.close();
    c.destroy();
  }
}

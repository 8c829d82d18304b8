// The per-packet cost of weftd --network-policy (part of `npm run bench -- netpol`): pod-to-pod TCP
// throughput (iperf3) and new-connection rate, same-node and cross-node on host-gw, in three states
// against none: 200 policies selecting the probed pods plus the allowing one (the worst case: a new
// connection walks all 201 chains), and 200 policies selecting other pods (a decoy per node) plus
// one allowing policy selecting the probed pods (the realistic case: the probed pods' group holds
// one policy). The 200 policies stay in the table in every state; the pods' labels decide what they
// select. The allowing policies sort last. States rotate round by round (paired ratios), as the
// data-plane bench does on a shared machine.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster, waitFor } from '../../testkit/cluster.ts';
import { nsExec } from '../../testkit/topology.ts';
import { POLICY_TABLE, SET_ISO_IN } from '../../agent/policy/desired.ts';
import { MAP_IN } from '../../agent/policy/groups.ts';
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
export function nfnlIn(netns: string): { has(set: string, ip: string): boolean; hasChain(chain: string): boolean; groupSize(map: string, ip: string): number | undefined; close(): void } {
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
    groupSize: (map, ip) => {
      const want = formatKeyBytes('ipv4_addr', ip).join(',');
      const data = (listSetElems(sock, POLICY_TABLE, map) ?? []).find((e) => e.key.join(',') === want)?.data;
      return data !== undefined && 'verdict' in data && data.verdict === 'jump' ? listRuleComments(sock, 'inet', POLICY_TABLE.name, data.chain).length : undefined;
    },
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
    const addPod = async (name: string, node: typeof n1, ip: string, labels: Record<string, string>): Promise<void> => {
      await kube.call('POST', '/api/v1/namespaces/tp/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'tp', labels }, spec: { nodeName: node.netns, automountServiceAccountToken: false, containers: [{ name: 'c', image: 'weft.invalid/none' }] } });
      await kube.call('PATCH', `/api/v1/namespaces/tp/pods/${name}/status`, { status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], hostIP: node.ip } }, 'application/merge-patch+json');
    };
    for (const [name, p] of roles) await addPod(name, p.node, p.ip, { role: name });
    // A decoy per node (an address of its lease no container holds) that the 200 policies select in every state.
    for (const [name, p] of [['decoy-1', client], ['decoy-2', cross]] as const) await addPod(name, p.node, p.ip.replace(/\.\d+$/, '.200'), { role: name, sel: 'on' });
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
    for (const [name, value] of [['zz-allow', 'on'], ['zz-only', 'only']] as const) {
      await kube.call('POST', '/apis/networking.k8s.io/v1/namespaces/tp/networkpolicies', { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name, namespace: 'tp' }, spec: {
        podSelector: { matchLabels: { sel: value } }, policyTypes: ['Ingress', 'Egress'], ingress: [{ from: [{ podSelector: { matchLabels: { role: 'client' } } }] }], egress: [{ to: [{ podSelector: {} }] }],
      } });
    }
    for (const n of [n1, n2]) kernels.push(nfnlIn(n.netns));
    const [k1, k2] = kernels as [ReturnType<typeof nfnlIn>, ReturnType<typeof nfnlIn>];
    // The probed pods' group chains hold the 201 policies (on), zz-only (only), or the pods are not isolated (off).
    type State = 'off' | 'on' | 'only';
    const groupWanted: Record<State, number | undefined> = { off: undefined, on: POLICIES, only: 1 };
    const setState = async (st: State): Promise<void> => {
      for (const [name] of roles) await kube.call('PATCH', `/api/v1/namespaces/tp/pods/${name}`, { metadata: { labels: { sel: st } } }, 'application/merge-patch+json');
      await waitFor(`pods in state ${st}`, () => [k1.has(SET_ISO_IN, same.ip) === (st !== 'off'), k2.has(SET_ISO_IN, cross.ip) === (st !== 'off'),
        k1.groupSize(MAP_IN, same.ip) === groupWanted[st], k2.groupSize(MAP_IN, cross.ip) === groupWanted[st]].every((x) => x), 60_000, 20);
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
    const samples = new Map<string, Record<State, number[]>>();
    const note = (k: string, st: State, v: number) => {
      const s = samples.get(k) ?? { off: [], on: [], only: [] };
      s[st].push(v);
      samples.set(k, s);
    };
    const order: State[] = ['off', 'on', 'only'];
    for (let i = 0; i < ROUNDS; i++) {
      // Rotate which state goes first each round, so that none gains from a position.
      for (const st of [...order.slice(i % 3), ...order.slice(0, i % 3)]) {
        await setState(st);
        for (const [label, p] of targets) {
          note(`${label} TCP throughput`, st, await iperf.gbps(client.netns, p.netns, p.ip));
          note(`${label} new connections`, st, await connRate(p.ip));
        }
      }
    }
    const load = `load ${round(loadAverage())}`;
    const rows: BenchResult[] = [];
    const what: Record<'on' | 'only', string> = { on: `${POLICIES} policies selecting both pods`, only: `${POLICIES} policies selecting other pods + 1 selecting both` };
    for (const [k, s] of samples) {
      const unit = k.endsWith('throughput') ? 'Gbit/s' : 'conn/s';
      process.stderr.write(`  ${k}: none ${s.off.map((x) => x.toFixed(2)).join(' ')} | worst ${s.on.map((x) => x.toFixed(2)).join(' ')} | other ${s.only.map((x) => x.toFixed(2)).join(' ')} ${unit}\n`);
      for (const st of ['on', 'only'] as const) {
        const ratio = median(s[st].map((v, r) => v / (s.off[r] ?? NaN)));
        rows.push({
          name: `${k}, ${what[st]} (median of ${ROUNDS}, ${load})`, value: round(median(s[st]), 2), unit,
          baseline: `no policy selecting them ${round(median(s.off), 2)} ${unit}`, ratio: round(ratio, 3), target: '>= 0.95x', ok: ratio >= 0.95,
        });
      }
    }
    return rows;
  } finally {
    for (const k of kernels) k.close();
    c.destroy();
  }
}

// `npm run bench -- netpol`: weftd --network-policy against kube-router v2.1.0's policy controller in
// the same run, on one kube-apiserver: 1,000 Pod objects (500 on each of two nodes) in 10 namespaces
// and 200 NetworkPolicies. Node 1 runs weftd --network-policy, node 2 kube-router (firewall only), so
// each programs the same load for its 500 local pods. Figures: cold programming (process start ->
// every policy's chain in the kernel), one label change -> the pod's address in the kernel set (p50/p99,
// timed by a poll loop inside the node's netns, resolution one nft/ipset run), and rule counts.
import { Cluster } from '../../testkit/cluster.ts';
import { KUBE_ROUTER_BIN, kubeRouterMissing, setNodeAddresses, startKubeRouter } from '../../testkit/kube-router.ts';
import { nsExec } from '../../testkit/topology.ts';
import { peerSetName } from '../../agent/policy/desired.ts';
import { loadAverage, median, quantile, round, type BenchResult } from './util.ts';

const PODS = 1000;
const POLICIES = 200;
const NAMESPACES = 10;
const CHANGES = 20;

async function pool<T>(items: T[], n: number, fn: (x: T) => Promise<void>): Promise<void> {
  let i = 0;
  await Promise.all(Array.from({ length: n }, async () => { while (i < items.length) await fn(items[i++] as T); }));
}

/** Waits inside `netns` until `check` (a shell condition) holds; resolves with the wall clock (ms) it first held. */
async function pollUntil(netns: string, check: string, timeoutS = 60): Promise<number> {
  // A 2 ms pause between checks: a spinning poller would take the CPU the enforcer needs.
  const script = `end=$(( $(date +%s) + ${timeoutS} )); until ${check}; do [ $(date +%s) -gt $end ] && exit 1; sleep 0.002; done; date +%s%N`;
  const r = await nsExec(netns, ['sh', '-c', script], { timeoutMs: (timeoutS + 5) * 1000 });
  if (r.code !== 0) throw new Error(`timed out in ${netns}: ${check}`);
  return Number(r.stdout.trim()) / 1e6;
}

/** The netpol benchmark (see the module comment). */
export async function benchNetpol(): Promise<BenchResult[]> {
  const missing = kubeRouterMissing();
  if (missing !== undefined) throw new Error(`netpol bench needs kube-router: ${missing}`);
  const c = await Cluster.create({ backend: 'host-gw', store: 'kube', nodes: 2, podsPerNode: 0, onProgress: (m) => process.stderr.write(`  ${m}\n`) });
  try {
    const kube = c.kube;
    const [n1, n2] = c.nodes;
    if (kube === undefined || n1 === undefined || n2 === undefined) throw new Error('cluster incomplete');
    await setNodeAddresses(c);
    for (let i = 0; i < NAMESPACES; i++) {
      await kube.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns-${i}`, labels: { team: `t${i % 3}` } } });
      await kube.call('POST', `/api/v1/namespaces/ns-${i}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
    }
    const pods = Array.from({ length: PODS }, (_, i) => ({ i, ns: `ns-${i % NAMESPACES}`, name: `p${i}`, node: i % 2 === 0 ? n1 : n2, ip: `10.244.${100 + (i >> 8)}.${i & 255}` }));
    process.stderr.write(`  creating ${PODS} pods and ${POLICIES} policies\n`);
    await pool(pods, 8, async (p) => {
      await kube.call('POST', `/api/v1/namespaces/${p.ns}/pods`, {
        apiVersion: 'v1', kind: 'Pod', metadata: { name: p.name, namespace: p.ns, labels: { app: `app-${p.i % 50}`, tier: `t${p.i % 3}` } },
        spec: { nodeName: p.node.netns, automountServiceAccountToken: false, containers: [{ name: 'c', image: 'weft.invalid/none', ports: [{ name: 'http', containerPort: 8000 + (p.i % 7) }] }] },
      });
      await kube.call('PATCH', `/api/v1/namespaces/${p.ns}/pods/${p.name}/status`, { status: { phase: 'Running', podIP: p.ip, podIPs: [{ ip: p.ip }], hostIP: p.node.ip } }, 'application/merge-patch+json');
    });
    const policies: { ns: string; name: string; spec: Record<string, unknown> }[] = Array.from({ length: POLICIES }, (_, j) => ({ ns: `ns-${j % NAMESPACES}`, name: `pol-${j}`, spec: {
      podSelector: { matchLabels: { app: `app-${j % 50}` } },
      ingress: [{ from: [{ podSelector: { matchLabels: { tier: `t${j % 3}` } } }, { namespaceSelector: { matchLabels: { team: `t${j % 3}` } }, podSelector: { matchLabels: { role: 'in' } } }], ports: [{ port: 80 }, { port: 'http' }] }],
    } }));
    // The label-change target: role=in joins the peer set of this policy (its pods select nothing else).
    policies.push({ ns: 'ns-0', name: 'probe', spec: { podSelector: { matchLabels: { app: 'app-0' } }, ingress: [{ from: [{ podSelector: { matchLabels: { role: 'in' } } }] }] } });
    await pool(policies, 8, async (p) => {
      await kube.call('POST', `/apis/networking.k8s.io/v1/namespaces/${p.ns}/networkpolicies`, { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: p.name, namespace: p.ns }, spec: p.spec });
    });
    const nPol = policies.length;

    // Cold: weftd restarted with --network-policy on node 1; kube-router started on node 2.
    await c.stopWeftd(n1);
    const t0w = Date.now();
    const weftProc = c.startWeftd(n1, ['--network-policy']);
    const coldWeft = (await pollUntil(n1.netns, `[ "$(nft -t list table inet weft-policy 2>/dev/null | grep -c 'chain pi-')" -ge ${nPol} ]`, 120)) - t0w;
    await weftProc;
    const t0k = Date.now();
    const krProc = startKubeRouter(c, n2);
    const coldKr = (await pollUntil(n2.netns, `[ "$(iptables-save -t filter 2>/dev/null | grep -c '^:KUBE-NWPLCY-')" -ge ${nPol} ]`, 300)) - t0k;
    await krProc;

    // Label changes: a pod of ns-0 that no policy targets (app=none) gets role=in, then loses it.
    const weftSet = peerSetName('ns-0', { matchLabels: { role: 'in' } });
    const lat = { weft: [] as number[], kr: [] as number[] };
    // One poller at a time (even changes timed on weft, odd ones on kube-router); both enforce every change.
    for (let k = 0; k < 2 * CHANGES; k++) {
      const target = pods.filter((p) => p.ns === 'ns-0')[k] ?? pods[0];
      if (target === undefined) break;
      await kube.call('PATCH', `/api/v1/namespaces/${target.ns}/pods/${target.name}`, { metadata: { labels: { app: 'none' } } }, 'application/merge-patch+json');
      await new Promise((r) => setTimeout(r, 1000));
      const ipRe = target.ip.replace(/\./g, '\\.');
      const wait = k % 2 === 0
        ? pollUntil(n1.netns, `nft list set inet weft-policy ${weftSet} 2>/dev/null | grep -qE '[{[:space:]]${ipRe}(,|[[:space:]]|$)'`)
        : pollUntil(n2.netns, `ipset save 2>/dev/null | grep -qE '^add KUBE-SRC-[A-Z0-9]+ ${ipRe}( |$)'`);
      await new Promise((r) => setTimeout(r, 100));
      const t = Date.now();
      await kube.call('PATCH', `/api/v1/namespaces/${target.ns}/pods/${target.name}`, { metadata: { labels: { role: 'in' } } }, 'application/merge-patch+json');
      (k % 2 === 0 ? lat.weft : lat.kr).push((await wait) - t);
    }
    const listing = JSON.parse((await nsExec(n1.netns, ['nft', '-j', 'list', 'table', 'inet', 'weft-policy'])).stdout) as { nftables: Record<string, unknown>[] };
    const weftRules = listing.nftables.filter((x) => 'rule' in x).length;
    const weftElems = listing.nftables.reduce((n, x) => n + ((x['set'] as { elem?: unknown[] } | undefined)?.elem?.length ?? 0), 0);
    const krSave = (await nsExec(n2.netns, ['iptables-save'])).stdout;
    const krRules = krSave.split('\n').filter((l) => /^-A KUBE-/.test(l)).length;
    const krChains = krSave.split('\n').filter((l) => /^:KUBE-/.test(l)).length;
    const krElems = (await nsExec(n2.netns, ['sh', '-c', 'ipset save | grep -c ^add'])).stdout.trim();
    const load = `load ${round(loadAverage())}`;
    process.stderr.write(`  kube-router ${KUBE_ROUTER_BIN}; ${load}\n`);
    const p = (xs: number[], q: number) => round(quantile(xs, q));
    return [
      { name: `cold: ${PODS} pods + ${nPol} policies, weftd start -> all chains`, value: round(coldWeft), unit: `ms (${load})`, baseline: 'kube-router', ratio: round(coldWeft / coldKr) },
      { name: 'cold: kube-router start -> all chains', value: round(coldKr), unit: 'ms' },
      { name: 'label change -> in kernel set, weft p50', value: round(median(lat.weft)), unit: `ms (p99 ${p(lat.weft, 0.99)}, n=${lat.weft.length})`, baseline: 'kube-router p50', ratio: round(median(lat.weft) / median(lat.kr)), target: 'p99 <= 100 ms', ok: quantile(lat.weft, 0.99) <= 100 },
      { name: 'label change -> in ipset, kube-router p50', value: round(median(lat.kr)), unit: `ms (p99 ${p(lat.kr, 0.99)})` },
      { name: 'weft rules (inet weft-policy)', value: weftRules, unit: `rules, ${weftElems} set elements` },
      { name: 'kube-router rules (KUBE-* chains)', value: krRules, unit: `rules in ${krChains} chains, ${krElems} ipset members` },
    ];
  } finally {
    c.destroy();
  }
}

// `npm run bench -- netpol`: weftd --network-policy against kube-router v2.1.0's policy controller in
// the same run, on one kube-apiserver: 1,000 Pod objects (500 on each of two nodes) in 10 namespaces
// and 200 NetworkPolicies. Node 1 runs weftd --network-policy, node 2 kube-router (firewall only), so
// each programs the same load for its 500 local pods. Figures: cold programming (process start ->
// every policy's chain in the kernel), one label change -> the pod's address in the kernel set (p50/p99,
// timed by polling the kernel), the same for a new pod and a deleted policy, and rule counts; then
// the per-packet cost (netpol-throughput.ts).
import { Cluster } from '../../testkit/cluster.ts';
import { KUBE_ROUTER_BIN, kubeRouterMissing, setNodeAddresses, startKubeRouter } from '../../testkit/kube-router.ts';
import { nsExec } from '../../testkit/topology.ts';
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { peerSetName } from '../../agent/policy/desired.ts';
import { hash } from '../../agent/policy/compile.ts';
import { benchNetpolThroughput, nfnlIn, patientKube } from './netpol-throughput.ts';
import { kubeRouterDstSet, kubeRouterSrcSet } from './netpol-kube-router.ts';
import { BenchWatch, type SeenEvent } from './netpol-watch.ts';
import { loadAverage, median, quantile, round, type BenchResult } from './util.ts';

const PODS = 1000;
const POLICIES = 200;
const NAMESPACES = 10;
// Timed changes per kind: weft's n is large enough for a p99 to mean something; kube-router's is
// smaller, since each of its changes costs a full sync of several seconds.
const N_WEFT = Number(process.env['WEFT_BENCH_NETPOL_N'] ?? 50);
const N_KR = Number(process.env['WEFT_BENCH_NETPOL_KR_N'] ?? 6);

/** Which side each timed change of a kind is timed on: kube-router's spread evenly among weft's. */
function schedule(): ('weft' | 'kr')[] {
  const n = N_WEFT + N_KR;
  return Array.from({ length: n }, (_, i) => (Math.floor(((i + 1) * N_KR) / n) > Math.floor((i * N_KR) / n) ? 'kr' : 'weft'));
}

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

/** Waits in this process until `check` holds (checked every ms); resolves with the wall clock (ms) it first held. */
async function pollHere(check: () => boolean, timeoutS = 60): Promise<number> {
  const end = Date.now() + timeoutS * 1000;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out polling the kernel');
    await new Promise((r) => setTimeout(r, 1));
  }
  return Date.now();
}

/** The netpol benchmark: changes against kube-router, then per-packet cost (WEFT_BENCH_NETPOL_PARTS=changes,throughput picks). */
export async function benchNetpol(): Promise<BenchResult[]> {
  const parts = (process.env['WEFT_BENCH_NETPOL_PARTS'] ?? 'changes,throughput').split(',');
  const rows: BenchResult[] = [];
  if (parts.includes('changes')) rows.push(...await benchNetpolChanges());
  if (parts.includes('throughput')) rows.push(...await benchNetpolThroughput());
  return rows;
}

/** Cold programming, change latencies and rule counts, weft vs kube-router (see the module comment). */
async function benchNetpolChanges(): Promise<BenchResult[]> {
  const missing = kubeRouterMissing();
  if (missing !== undefined) throw new Error(`netpol bench needs kube-router: ${missing}`);
  const c = await Cluster.create({ backend: 'host-gw', store: 'kube', nodes: 2, podsPerNode: 0, onProgress: (m) => process.stderr.write(`  ${m}\n`) });
  try {
    const kube = c.kube === undefined ? undefined : patientKube(c.kube);
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
    const weftProc = c.startWeftd(n1, ['--network-policy', '--log-level', 'debug']);
    const coldWeft = (await pollUntil(n1.netns, `[ "$(nft -t list table inet weft-policy 2>/dev/null | grep -c 'chain pi-')" -ge ${nPol} ]`, 120)) - t0w;
    await weftProc;
    const t0k = Date.now();
    const krProc = startKubeRouter(c, n2);
    const coldKr = (await pollUntil(n2.netns, `[ "$(iptables-save -t filter 2>/dev/null | grep -c '^:KUBE-NWPLCY-')" -ge ${nPol} ]`, 300)) - t0k;
    const kr = await krProc;

    // Changes, interleaved (schedule()): each timed on weft (node 1) or kube-router (node 2); both
    // enforce every change. Each is timed from just before its API call to the first poll that sees it
    // in the kernel: for weft an nf_tables netlink dump from this process (no spawn, ~1 ms resolution),
    // for kube-router an `ipset test` loop in the node's netns (a few ms per check).
    const nl = nfnlIn(n1.netns);
    const sides = () => ({ weft: [] as number[], kr: [] as number[] });
    const lat = { label: sides(), add: sides(), del: sides() };
    // The same changes timed from the API call's response (the write is committed, so its watch event
    // is out): the API server's and etcd's own time left out.
    const fromResp = { label: sides(), add: sides(), del: sides() };
    // And from the change's watch event reaching the bench's own watcher (BenchWatch, a list+watch
    // started before the changes): what an informer of either enforcer can react to at the earliest.
    const fromEvent = { label: sides(), add: sides(), del: sides() };
    const podWatch = await BenchWatch.start(c.kube as NonNullable<typeof c.kube>, '/api/v1/namespaces/ns-0/pods');
    const polWatch = await BenchWatch.start(c.kube as NonNullable<typeof c.kube>, '/apis/networking.k8s.io/v1/networkpolicies');
    const order = schedule();
    const windows: Partial<Record<'label' | 'add' | 'del', [number, number]>> = {};
    try {
      const weftSet = peerSetName('ns-0', { matchLabels: { role: 'in' } });
      const krSet = kubeRouterSrcSet('ns-0', 'probe', 0);
      const inWeft = (ip: string) => (): boolean => nl.has(weftSet, ip);
      const inKr = (ip: string): string => `ipset test ${krSet} ${ip} 2>/dev/null`;
      type Kind = 'label' | 'add' | 'del';
      const timed = async (k: number, kind: Kind, act: () => Promise<void>, weft: () => boolean, krCheck: string, watch: BenchWatch, isEvent: (e: SeenEvent) => boolean): Promise<void> => {
        const side = order[k] ?? 'weft';
        // The other enforcer is paused while one side's change is timed (each measured alone, as on a
        // node that runs one of them): kube-router's full syncs would otherwise take the cores weftd needs.
        const other = side === 'weft' ? kr : n1.weftd;
        other?.kill('SIGSTOP');
        const { t, tr, te, got } = await (async () => {
          try {
            const wait = (side === 'weft' ? pollHere(weft, 20) : pollUntil(n2.netns, krCheck, 20)).catch(() => NaN);
            const seen = watch.when(isEvent, 20_000);
            await new Promise((r) => setTimeout(r, 100));
            const t0 = Date.now();
            await act();
            return { t: t0, tr: Date.now(), got: await wait, te: await seen };
          } finally {
            other?.kill('SIGCONT');
          }
        })();
        // A change never seen within 20 s is counted apart (NaN), not as a figure.
        if (Number.isNaN(got)) process.stderr.write(`  change ${k} not seen on ${side === 'weft' ? 'weft' : `kube-router (ipsets: ${(await nsExec(n2.netns, ['sh', '-c', 'ipset list -n | grep KUBE-SRC | head -5'])).stdout.trim().replace(/\n/g, ' ')})`} within 20 s\n`);
        if (Number.isNaN(te)) process.stderr.write(`  change ${k} (${kind}): no watch event at the bench's watcher\n`);
        lat[kind][side].push(got - t);
        fromResp[kind][side].push(got - tr);
        fromEvent[kind][side].push(got - te);
      };
      // Label change: a pod of ns-0 that no policy targets (app=none) gets role=in, joining the probe policy's peer set.
      const wlabel = Date.now();
      const ns0 = pods.filter((p) => p.ns === 'ns-0');
      for (let k = 0; k < order.length && k < ns0.length; k++) {
        const target = ns0[k];
        if (target === undefined) break;
        await kube.call('PATCH', `/api/v1/namespaces/${target.ns}/pods/${target.name}`, { metadata: { labels: { app: 'none' } } }, 'application/merge-patch+json');
        await new Promise((r) => setTimeout(r, 1000));
        await timed(k, 'label', () => kube.call('PATCH', `/api/v1/namespaces/${target.ns}/pods/${target.name}`, { metadata: { labels: { role: 'in' } } }, 'application/merge-patch+json').then(() => undefined), inWeft(target.ip), inKr(target.ip),
          podWatch, (e) => e.obj.metadata?.name === target.name && e.obj.metadata.labels?.['role'] === 'in');
      }
      windows.label = [wlabel, Date.now()];
      // kube-router creates a rule's source ipset only once a pod matches (processIngressRules): now one must exist, by the name we poll.
      if ((await nsExec(n2.netns, ['ipset', 'list', '-n'])).stdout.split('\n').includes(krSet) !== true) throw new Error(`kube-router has no ipset ${krSet} for ns-0/probe: its naming changed`);
      // Pod added: a new role=in pod of ns-0 gets its address (the status update is the event that matters).
      const wadd = Date.now();
      for (let k = 0; k < order.length && k < 250; k++) {
        const name = `new-${k}`;
        const ip = `10.244.120.${k + 1}`;
        const node = k % 2 === 0 ? n1 : n2;
        await kube.call('POST', '/api/v1/namespaces/ns-0/pods', {
          apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns-0', labels: { app: 'none', role: 'in' } },
          spec: { nodeName: node.netns, automountServiceAccountToken: false, containers: [{ name: 'c', image: 'weft.invalid/none' }] },
        });
        await new Promise((r) => setTimeout(r, 1000));
        await timed(k, 'add', () => kube.call('PATCH', `/api/v1/namespaces/ns-0/pods/${name}/status`, { status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], hostIP: node.ip } }, 'application/merge-patch+json').then(() => undefined), inWeft(ip), inKr(ip),
          podWatch, (e) => e.obj.metadata?.name === name && e.obj.status?.podIP === ip);
      }
      windows.add = [wadd, Date.now()];
      // Policy deleted: weft's chain of the policy is gone; kube-router's destination ipset of it is gone
      // (kube-router removes a policy's ipsets after it has restored the chains without it).
      const wdel = Date.now();
      for (let k = 0; k < order.length && k < POLICIES; k++) {
        const pol = policies[k];
        if (pol === undefined) break;
        const chain = `pi-${hash(`${pol.ns}/${pol.name}`)}`;
        const krDst = kubeRouterDstSet(pol.ns, pol.name);
        await new Promise((r) => setTimeout(r, 1000));
        // Both must hold the policy first, or a poll for "gone" would time nothing.
        const holds = order[k] === 'weft' ? nl.hasChain(chain) : (await nsExec(n2.netns, ['ipset', 'list', '-n'])).stdout.split('\n').includes(krDst);
        if (!holds) {
          process.stderr.write(`  ${order[k] === 'weft' ? `weft has no chain ${chain}` : `kube-router has no ipset ${krDst}`} for ${pol.ns}/${pol.name}: not timed\n`);
          continue;
        }
        await timed(k, 'del', () => kube.call('DELETE', `/apis/networking.k8s.io/v1/namespaces/${pol.ns}/networkpolicies/${pol.name}`).then(() => undefined),
          () => !nl.hasChain(chain), `! ipset list -n 2>/dev/null | grep -qx ${krDst}`, polWatch, (e) => e.type === 'DELETED' && e.obj.metadata?.name === pol.name && e.obj.metadata.namespace === pol.ns);
      }
      windows.del = [wdel, Date.now()];
    } finally {
      nl.close();
      podWatch.close();
      polWatch.close();
    }
    const listing = JSON.parse((await nsExec(n1.netns, ['nft', '-j', 'list', 'table', 'inet', 'weft-policy'])).stdout) as { nftables: Record<string, unknown>[] };
    const weftRules = listing.nftables.filter((x) => 'rule' in x).length;
    const weftElems = listing.nftables.reduce((n, x) => n + ((x['set'] as { elem?: unknown[] } | undefined)?.elem?.length ?? 0), 0);
    const krSave = (await nsExec(n2.netns, ['iptables-save'])).stdout;
    const krRules = krSave.split('\n').filter((l) => /^-A KUBE-/.test(l)).length;
    const krChains = krSave.split('\n').filter((l) => /^:KUBE-/.test(l)).length;
    const krElems = (await nsExec(n2.netns, ['sh', '-c', 'ipset save | grep -c ^add'])).stdout.trim();
    // weftd's own time from the watch event to the kernel (its debug log: eventMs of each pass), per kind of change.
    const passes = readFileSync(join(n1.dir, 'weftd.log'), 'utf8').split('\n').flatMap((l) => {
      try {
        const r = JSON.parse(l) as { msg?: string; ts?: string; eventMs?: number; modelMs?: number; ms?: number };
        return r.msg === 'network policy applied' && typeof r.eventMs === 'number' && r.ts !== undefined ? [{ t: Date.parse(r.ts), eventMs: r.eventMs, modelMs: r.modelMs ?? NaN, applyMs: r.ms ?? NaN }] : [];
      } catch {
        return [];
      }
    });
    const inWindow = (kind: 'label' | 'add' | 'del') => passes.filter((x) => { const w = windows[kind]; return w !== undefined && x.t >= w[0] && x.t <= w[1]; });
    const load = `load ${round(loadAverage())}`;
    process.stderr.write(`  kube-router ${KUBE_ROUTER_BIN}; ${load}\n`);
    const p = (xs: number[], q: number) => round(quantile(xs, q));
    return [
      { name: `cold: ${PODS} pods + ${nPol} policies, weftd start -> all chains`, value: round(coldWeft), unit: `ms (${load})`, baseline: 'kube-router', ratio: round(coldWeft / coldKr) },
      { name: 'cold: kube-router start -> all chains', value: round(coldKr), unit: 'ms' },
      ...(['label', 'add', 'del'] as const).flatMap((kind) => {
        const seen = (xs: number[]) => xs.filter((x) => !Number.isNaN(x));
        const l = { weft: seen(lat[kind].weft), kr: seen(lat[kind].kr) };
        const missed = (xs: number[]) => xs.length - seen(xs).length;
        const what = { label: 'label change -> pod in the peer set', add: 'pod added (address) -> in the peer set', del: 'policy deleted -> its chain/ipset gone' }[kind];
        return [
          { name: `${what}, weft p50`, value: round(median(l.weft)), unit: `ms (p99 ${p(l.weft, 0.99)}, n=${l.weft.length}, unseen ${missed(lat[kind].weft)})`, baseline: 'kube-router p50', ratio: round(median(l.weft) / median(l.kr)), target: 'p99 <= 100 ms', ok: quantile(l.weft, 0.99) <= 100 },
          { name: `${what}, kube-router p50`, value: round(median(l.kr)), unit: `ms (p99 ${p(l.kr, 0.99)}, n=${l.kr.length}, unseen ${missed(lat[kind].kr)})` },
        ];
      }),
      ...(['label', 'add', 'del'] as const).flatMap((kind) => {
        const seen = (xs: number[]) => xs.filter((x) => !Number.isNaN(x));
        const w = inWindow(kind);
        const ev = w.map((x) => x.eventMs);
        return [
          { name: `${kind}: from the API response, weft p50`, value: round(median(seen(fromResp[kind].weft))), unit: `ms (p99 ${p(seen(fromResp[kind].weft), 0.99)}); kube-router p50 ${round(median(seen(fromResp[kind].kr)))} ms` },
          { name: `${kind}: from the watch event at the bench's watcher, weft p50`, value: round(median(seen(fromEvent[kind].weft))), unit: `ms (p99 ${p(seen(fromEvent[kind].weft), 0.99)}, n=${seen(fromEvent[kind].weft).length}); kube-router p50 ${round(median(seen(fromEvent[kind].kr)))} ms (p99 ${p(seen(fromEvent[kind].kr), 0.99)}, n=${seen(fromEvent[kind].kr).length})`,
            target: 'p99 <= 100 ms', ok: quantile(seen(fromEvent[kind].weft), 0.99) <= 100 },
          { name: `${kind}: weftd watch event -> kernel (its log), p50`, value: round(median(ev)), unit: `ms (p99 ${p(ev, 0.99)}, n=${ev.length}; model+diff p50 ${round(median(w.map((x) => x.modelMs)))} ms, transaction p50 ${round(median(w.map((x) => x.applyMs)))} ms)` },
        ];
      }),
      { name: 'weft rules (inet weft-policy)', value: weftRules, unit: `rules, ${weftElems} set elements` },
      { name: 'kube-router rules (KUBE-* chains)', value: krRules, unit: `rules in ${krChains} chains, ${krElems} ipset members` },
    ];
  } finally {
    // WEFT_BENCH_NETPOL_LOGS=<dir>: keep both enforcers' logs (kube-router's sync times, weftd's passes).
    const keep = process.env['WEFT_BENCH_NETPOL_LOGS'];
    if (keep !== undefined) for (const [n, f] of [[c.nodes[0], 'weftd.log'], [c.nodes[1], 'kube-router.log']] as const) if (n !== undefined) try { copyFileSync(join(n.dir, f), join(keep, f)); } catch { /* absent */ }
    c.destroy();
  }
}

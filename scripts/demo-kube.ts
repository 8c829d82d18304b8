// `npm run demo -- --kube`: a real 3-node Kubernetes cluster on this machine (testkit/kube-cluster:
// kube-apiserver, kube-controller-manager, kube-scheduler, a kubelet + containerd per node
// namespace), weft installed the way users install it (`kubectl apply -f deploy/weft.yaml` with the
// image scripts/image.sh builds), then a reachability matrix of pods Kubernetes scheduled, pod start
// latency of 30 pods next to `node -e 0`, and a teardown that leaves nothing (counted). Beside it, the
// same cluster with flannel as users run it (reference plugins, flannel's CNI plugin, the real
// flanneld --kube-subnet-mgr); pod starts are measured on both, interleaved, so that the shared
// machine's load falls on both alike. `--no-flannel` skips that second cluster.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { readFileSync } from 'node:fs';
import { KubeCluster } from '../testkit/kube-cluster/cluster.ts';
import { formatCensus } from '../testkit/kube-cluster/census.ts';
import { buildWeftImageArchive } from '../testkit/kube-cluster/image.ts';
import { podStartLatencies, quantile, type PodStartTimes } from '../testkit/kube-cluster/latency.ts';
import { Flannel, flannelMissing } from '../testkit/kube-cluster/flannel.ts';
import { formatLeftovers, nodeLeftovers } from '../testkit/kube-cluster/leftovers.ts';
import { kubeClusterMissing } from '../testkit/kube-cluster/requirements.ts';
import { formatReachability, httpdDeployment, listPods, reachability } from '../testkit/kube-cluster/workload.ts';

const ROOT = join(import.meta.dirname, '..');
const MANIFEST = join(ROOT, 'deploy', 'weft.yaml');
const NS = 'weft-demo';
const started = performance.now();
const tty = process.stdout.isTTY;
const green = (s: string): string => (tty ? `\x1b[32m${s}\x1b[0m` : s);
const red = (s: string): string => (tty ? `\x1b[31m${s}\x1b[0m` : s);

function step(msg: string): void {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)}s] ${msg}\n`);
}

async function timed<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  step(`${what} ...`);
  const r = await fn();
  step(`${what}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return r;
}

/** The image deploy/weft.yaml names. */
function manifestImage(): string {
  for (const d of parseAllDocuments(readFileSync(MANIFEST, 'utf8'))) {
    const o = d.toJS() as { kind?: string; spec?: { template?: { spec?: { containers?: Array<{ image: string }> } } } } | null;
    const img = o?.kind === 'DaemonSet' ? o.spec?.template?.spec?.containers?.[0]?.image : undefined;
    if (img !== undefined) return img;
  }
  throw new Error('deploy/weft.yaml has no DaemonSet image');
}

const q = (v: number[]): string => `p50 ${(quantile(v, 0.5) / 1000).toFixed(2)} s, p99 ${(quantile(v, 0.99) / 1000).toFixed(2)} s`;
const load = (): string => spawnSync('uptime', { encoding: 'utf8' }).stdout.trim().replace(/.*load average: /, 'load ');

/** One cluster's pod start figures. */
interface StartFigures {
  what: string;
  burst: PodStartTimes;
  single: PodStartTimes;
  nodeMs: number[];
  loads: string[];
}

const ROUNDS = 2;

/** A burst of 30 pods (Deployment `app`) on `c`, then the Deployment deleted and its pods waited out; appends to `f`. */
async function burstRound(c: KubeCluster, f: StartFigures, app: string): Promise<void> {
  const t = await timed(`${f.what}: a Deployment of 30, created -> Running and Ready`, () => podStartLatencies(c, NS, app, 30, KubeCluster.busyboxImage));
  f.nodeMs.push(nodeStartMs(3));
  f.loads.push(load());
  f.burst.running.push(...t.running);
  f.burst.ready.push(...t.ready);
  await c.mustKubectl(['-n', NS, 'delete', 'deployment', app, '--wait=false']);
  await c.waitFor(`${app} pods gone`, async () => (await listPods(c, NS, app)).length === 0, 180_000, 250);
}

/** One pod (Deployment `app`) on `c`; appends to `f`. */
async function singleRound(c: KubeCluster, f: StartFigures, app: string): Promise<void> {
  const one = await podStartLatencies(c, NS, app, 1, KubeCluster.busyboxImage);
  f.single.running.push(...one.running);
  f.single.ready.push(...one.ready);
  await c.mustKubectl(['-n', NS, 'delete', 'deployment', app, '--wait=false']);
}

/** The same 3-node cluster with flannel as users run it (no weft at all): reference plugins, flannel CNI, flanneld. */
async function flannelCluster(): Promise<KubeCluster> {
  const c = await timed('building a second cluster for flannel (reference plugins, flannel CNI, flanneld --kube-subnet-mgr)', () =>
    KubeCluster.create({ nodes: 3, progress: (m) => step(`  ${m}`) }));
  try {
    await c.waitFor('nodes with a podCIDR', async () => (await c.nodeStatuses()).every((n) => n.podCidr !== undefined), 60_000);
    const f = new Flannel(c);
    const t0 = performance.now();
    for (const n of c.nodes) f.installCni(n);
    await Promise.all(c.nodes.map((n) => f.start(n)));
    await c.waitFor('every node Ready', async () => (await c.nodeStatuses()).every((n) => n.ready), 180_000, 250);
    step(`flanneld on every node -> every node Ready: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await c.mustKubectl(['create', 'namespace', NS]);
    await c.waitFor('the default ServiceAccount', async () => (await c.control.curl('GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`)).stdout.includes('"uid"'), 60_000);
    return c;
  } catch (e) {
    c.destroySync();
    throw e;
  }
}

/**
 * Pod start on every cluster of `cs`, interleaved so that the machine's load (shared, changing)
 * falls on all alike: ROUNDS bursts of 30 each, alternating which cluster goes first, then 5
 * single pods each, alternating.
 */
async function measureStarts(cs: Array<{ c: KubeCluster; f: StartFigures }>): Promise<void> {
  for (let r = 0; r < ROUNDS; r++) {
    for (const x of r % 2 === 0 ? cs : [...cs].reverse()) await burstRound(x.c, x.f, `lat${r}`);
  }
  await timed('pod start latency: 5 pods one at a time on each cluster, alternating', async () => {
    for (let i = 0; i < 5; i++) {
      for (const x of i % 2 === 0 ? cs : [...cs].reverse()) await singleRound(x.c, x.f, `one${i}`);
    }
  });
  for (const x of cs) {
    for (const v of [x.f.burst.running, x.f.burst.ready, x.f.single.running, x.f.single.ready]) v.sort((a, b) => a - b);
  }
}

function nodeStartMs(runs: number): number {
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    spawnSync('node', ['-e', '0']);
    t.push(performance.now() - t0);
  }
  return quantile(t.sort((a, b) => a - b), 0.5);
}

async function main(): Promise<void> {
  process.stdout.write([
    'weft on a real Kubernetes cluster (3 kubelet nodes in network namespaces on this machine).',
    'Needs: root, Debian 12 (containerd 1.6, runc, podman, busybox-static, openssl), cgroup v1 or v2;',
    'kubelet, kube-apiserver, kube-controller-manager, kube-scheduler and etcd v1.34.4 built once by',
    'scripts/kube-setup.sh through the Go module proxy (about 8 minutes on 2 cores the first time,',
    'cached in /var/cache/weft), Debian\'s kubectl (scripts/kubectl-setup.sh); flanneld and flannel\'s CNI plugin',
    '(scripts/flannel-setup.sh, scripts/flannel-cni-setup.sh) for the comparison. A run then takes about 4 minutes.',
    '',
  ].join('\n'));
  const missing = kubeClusterMissing();
  if (missing !== undefined) throw new Error(`cannot run: ${missing}`);
  const image = manifestImage();
  const imgDir = mkdtempSync(join(tmpdir(), 'weft-demo-kube-'));
  // Ctrl-C ends the process without running `finally`: the cluster's own hooks tear it down, this removes the image archive.
  process.on('exit', () => rmSync(imgDir, { recursive: true, force: true }));
  let k: KubeCluster | undefined;
  let kf: KubeCluster | undefined;
  const results: StartFigures[] = [];
  try {
    const archive = join(imgDir, 'weft-image.tar');
    await timed(`building ${image} (scripts/image.sh, podman, FROM scratch)`, () => buildWeftImageArchive(imgDir, image, archive));
    k = await timed('building the cluster (certificates, control plane, 3 nodes: containerd + kubelet)', () =>
      KubeCluster.create({ nodes: 3, images: [archive], progress: (m) => step(`  ${m}`) }));
    const c = k;
    await timed('waiting for the nodes to report "cni plugin not initialized"', () => c.waitFor('nodes NotReady with a podCIDR',
      async () => (await c.nodeStatuses()).every((n) => !n.ready && n.podCidr !== undefined && /cni plugin not initialized/.test(n.message)), 60_000));
    for (const n of await c.nodeStatuses()) step(`  ${n.name} NotReady, podCIDR ${n.podCidr}`);
    const t0 = performance.now();
    await c.mustKubectl(['apply', '-f', MANIFEST]);
    await c.waitFor('every node Ready', async () => (await c.nodeStatuses()).every((n) => n.ready), 180_000, 250);
    const readyS = (performance.now() - t0) / 1000;
    step(`kubectl apply -f deploy/weft.yaml -> every node Ready: ${readyS.toFixed(1)} s`);
    await c.mustKubectl(['create', 'namespace', NS]);
    await c.waitFor('the default ServiceAccount', async () => (await c.control.curl('GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`)).stdout.includes('"uid"'), 60_000);

    await timed('a Deployment of 6 busybox httpd pods, spread over the nodes, HTTP probes', async () => {
      await c.mustKubectl(['apply', '-f', '-'], JSON.stringify(httpdDeployment('web', NS, 6, KubeCluster.busyboxImage)));
      await c.waitFor('6 pods Ready', async () => (await listPods(c, NS, 'web')).filter((p) => p.ready).length === 6, 180_000, 250);
    });
    const pods = await listPods(c, NS, 'web');
    for (const [i, p] of pods.entries()) step(`  p${i + 1} ${p.name} ${p.ip} on ${p.node}`);
    const rows = await timed('reachability: every pod and every node fetches every pod\'s page', () => reachability(c, NS, pods));
    const bad = rows.reduce((s, r) => s + r.failed.length, 0);
    process.stdout.write(`\n${formatReachability(rows, pods)}\n${bad === 0 ? green('all reached') : red(`${bad} failed`)}\n\n`);
    await c.mustKubectl(['-n', NS, 'delete', 'deployment', 'web', '--wait=true']);
    await c.waitFor('web pods gone', async () => (await listPods(c, NS, 'web')).length === 0, 120_000, 250);

    const fm = process.argv.includes('--no-flannel') ? 'not asked (--no-flannel)' : flannelMissing();
    if (fm === undefined) kf = await flannelCluster();
    else step(`no flannel comparison: ${fm}`);
    const empty = (what: string): StartFigures => ({ what, burst: { running: [], ready: [] }, single: { running: [], ready: [] }, nodeMs: [], loads: [] });
    const cs = [{ c, f: empty('weft (deploy/weft.yaml)') }, ...(kf ? [{ c: kf, f: empty('reference plugins + flanneld') }] : [])];
    await measureStarts(cs);
    results.push(...cs.map((x) => x.f));
    await c.mustKubectl(['apply', '-f', '-'], JSON.stringify(httpdDeployment('lat', NS, 30, KubeCluster.busyboxImage)));
    await c.waitFor('30 pods Ready', async () => (await listPods(c, NS, 'lat')).filter((p) => p.ready).length === 30, 300_000, 500);
    await timed('scale to 0 and count what pods left on the nodes', async () => {
      await c.mustKubectl(['-n', NS, 'scale', 'deployment/lat', '--replicas=0']);
      await c.waitFor('pods gone', async () => (await c.control.call<{ items: unknown[] }>('GET', `/api/v1/namespaces/${NS}/pods`)).items.length === 0, 180_000, 250);
      await c.waitFor('addresses freed', async () => (await Promise.all(c.nodes.map((n) => nodeLeftovers(n)))).every((l) => l.addresses.length === 0 && l.veths === 0), 60_000, 500).catch(() => undefined);
      for (const n of c.nodes) step(`  ${n.name}: ${formatLeftovers(await nodeLeftovers(n))}`);
    });
    process.stdout.write(`nodes Ready ${readyS.toFixed(1)} s after kubectl apply; ${load()}\n`);
  } finally {
    for (const [what, c] of [['teardown', k], ['flannel cluster teardown', kf]] as const) {
      if (!c) continue;
      const t0 = performance.now();
      try {
        c.destroySync();
      } catch (e) {
        step(`${what}: ${e instanceof Error ? e.message : String(e)}`);
      }
      step(`${what}: ${((performance.now() - t0) / 1000).toFixed(1)} s; left on the machine: ${formatCensus(c.census())}`);
    }
    rmSync(imgDir, { recursive: true, force: true });
  }
  process.stdout.write(`\npod start, created -> Running (-> Ready), ${ROUNDS} bursts of 30 and 5 single pods per cluster, interleaved:\n`);
  for (const r of results) {
    process.stdout.write(`  ${r.what.padEnd(30)} 30 at once: ${q(r.burst.running)} (${q(r.burst.ready)}); one at a time: ${q(r.single.running)} (${q(r.single.ready)})\n`);
    process.stdout.write(`  ${''.padEnd(30)} node -e 0 after each burst: ${r.nodeMs.map((v) => `${v.toFixed(0)} ms`).join(', ')}; ${r.loads.join('; ')}\n`);
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`demo --kube failed: ${e instanceof Error ? e.message : String(e)}\n`);
  // exit now: the clusters' exit hooks remove whatever a failed step left running.
  process.exit(1);
});

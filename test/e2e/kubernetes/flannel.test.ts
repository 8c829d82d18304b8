// Issue 31: the same kubelet cluster with flannel as users run it (Debian's reference plugins,
// flannel's CNI plugin, kube-flannel's conflist, the real flanneld --ip-masq --kube-subnet-mgr on
// every node) passes the checks weft's DaemonSet passes (nodes Ready, a Deployment spread 2/2/2 with
// HTTP probes, every pod and node reaching every pod, a hostPort from another node); then a
// migration node by node to deploy/weft.yaml as docs/kubernetes.md describes (its network is cbr0
// as kube-flannel's; flanneld stopped on one node, weft's DaemonSet let onto it by a node label), with pings
// between old pods running throughout and an old pod deleted through weft's plugins at the end.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeCluster } from '../../../testkit/kube-cluster/cluster.ts';
import { Flannel, FLANNEL_CNI, flannelMissing } from '../../../testkit/kube-cluster/flannel.ts';
import { buildWeftImageArchive } from '../../../testkit/kube-cluster/image.ts';
import { nodeLeftovers } from '../../../testkit/kube-cluster/leftovers.ts';
import { formatPingReport, startPinger, stopPinger } from '../../../testkit/kube-cluster/pinger.ts';
import { httpdPod } from '../../../testkit/kube-cluster/pod-features.ts';
import { formatReachability, httpdDeployment, listPods, reachability, type PodView } from '../../../testkit/kube-cluster/workload.ts';
import { nsExec } from '../../../testkit/topology.ts';
import { manifestObjects } from '../deploy/helpers.ts';
import { daemonSetImage, failUnlessReady, imageArchive, skipOutsideCi, teardownCluster } from './helpers.ts';

const NS = 'flannel-e2e';
const APP = 'web';
const LABEL = 'weft.test/cni';
const log = (m: string): void => void process.stderr.write(`# ${m}\n`);

function skip(): string | false {
  const s = skipOutsideCi();
  if (s !== false) return s;
  const f = flannelMissing();
  if (f === undefined || process.env['CI'] === 'true') return false;
  process.stderr.write(`########## SKIPPED kube-flannel e2e: ${f} ##########\n`);
  return f;
}

/** deploy/weft.yaml as a node-by-node migration applies it: the DaemonSet only on nodes labelled LABEL=weft (its network is cbr0, kube-flannel's, as shipped). */
function migrationManifest(): { list: Record<string, unknown>; conflist: string; dsName: string; dsNs: string } {
  const objs = manifestObjects().map((o) => structuredClone(o)) as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const cm = objs.find((o) => o['kind'] === 'ConfigMap');
  const ds = objs.find((o) => o['kind'] === 'DaemonSet');
  assert.ok(cm && ds);
  const conflist = cm['data']['cni-conf.json'] as string;
  assert.equal((JSON.parse(conflist) as { name: string }).name, 'cbr0', 'deploy/weft.yaml keeps kube-flannel\'s network name (docs/kubernetes.md, migrating)');
  const terms = ds['spec']['template']['spec']['affinity']['nodeAffinity']['requiredDuringSchedulingIgnoredDuringExecution']['nodeSelectorTerms'] as Array<{ matchExpressions: unknown[] }>;
  for (const t of terms) t.matchExpressions.push({ key: LABEL, operator: 'In', values: ['weft'] });
  return { list: { apiVersion: 'v1', kind: 'List', items: objs }, conflist, dsName: ds['metadata']['name'] as string, dsNs: ds['metadata']['namespace'] as string };
}

void describe('kube-flannel as users run it on a kubelet cluster, then migrated node by node to deploy/weft.yaml', { skip: skip(), timeout: 900_000 }, () => {
  let k: KubeCluster;
  let flannel: Flannel;
  let imgDir: string;

  before(async () => {
    failUnlessReady();
    const f = flannelMissing();
    if (f !== undefined) throw new Error(`kube-flannel e2e cannot run: ${f}`);
    imgDir = mkdtempSync(join(tmpdir(), 'weft-kfl-'));
    process.on('exit', () => rmSync(imgDir, { recursive: true, force: true }));
    await buildWeftImageArchive(imgDir, daemonSetImage(), imageArchive(imgDir));
    k = await KubeCluster.create({ nodes: 3, images: [imageArchive(imgDir)], progress: log });
    flannel = new Flannel(k);
  }, { timeout: 600_000 });

  after(() => teardownCluster(k, imgDir, log));

  const pods = (app = APP): Promise<PodView[]> => listPods(k, NS, app);
  const assertReach = async (targets: PodView[], sources?: PodView[], nodes = k.nodes, what = ''): Promise<void> => {
    const rows = await reachability(k, NS, targets, sources, nodes);
    log(`reachability${what}:\n${formatReachability(rows, targets)}`);
    for (const r of rows) assert.deepEqual(r.failed, [], `${what}: ${r.from} cannot reach ${r.failed.join(', ')}${r.error !== undefined ? ` (${r.error})` : ''}`);
  };

  void it('reference plugins + flannel CNI + flanneld --kube-subnet-mgr: nodes Ready, a Deployment of 6 spread 2/2/2 with probes, every pod and node reaches every pod, a hostPort from another node', async () => {
    await k.waitFor('every node with a podCIDR', async () => (await k.nodeStatuses()).every((n) => n.podCidr !== undefined), 60_000);
    const t0 = Date.now();
    for (const n of k.nodes) flannel.installCni(n);
    await Promise.all(k.nodes.map((n) => flannel.start(n)));
    await k.waitFor('every node Ready', async () => (await k.nodeStatuses()).every((n) => n.ready), 180_000, 250);
    log(`flanneld started and nodes Ready in ${Date.now() - t0} ms`);
    await k.mustKubectl(['create', 'namespace', NS]);
    await k.waitFor(`ServiceAccount default in ${NS}`, async () => (await k.control.curl('GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`)).stdout.includes('"uid"'), 60_000);
    await k.mustKubectl(['apply', '-f', '-'], JSON.stringify(httpdDeployment(APP, NS, 6, KubeCluster.busyboxImage)));
    await k.waitFor('6 pods Running and Ready', async () => { const p = await pods(); return p.length === 6 && p.every((x) => x.phase === 'Running' && x.ready); }, 180_000, 250);
    const p = await pods();
    assert.deepEqual(k.nodes.map((n) => p.filter((x) => x.node === n.name).length), [2, 2, 2], 'topologySpreadConstraints');
    await assertReach(p);
    const [n1, n2] = k.nodes;
    assert.ok(n1 && n2);
    await k.mustKubectl(['apply', '-f', '-'], JSON.stringify(httpdPod('hostport', NS, KubeCluster.busyboxImage, n1.name, { hostPort: 8080 })));
    await k.waitFor('the hostPort pod Running', async () => (await pods('hostport')).some((x) => x.phase === 'Running'), 120_000, 250);
    const r = await nsExec(n2.netns, ['curl', '-fsS', '--max-time', '5', `http://${n1.ip}:8080/index.html`]);
    assert.equal(r.code, 0, `${n2.name} -> ${n1.ip}:8080: ${r.stderr}`);
    await k.mustKubectl(['-n', NS, 'delete', 'pod', 'hostport', '--wait=true']);
  });

  void it('migration node by node: flanneld stopped, weft\'s DaemonSet let on by a label; old pods keep reaching each other, new pods reach everyone; an old pod is deleted through weft\'s plugins', async () => {
    const old = await pods();
    const pingers = k.nodes.map((n, i) => ({ from: old.find((x) => x.node === n.name), to: old.find((x) => x.node === k.nodes[(i + 1) % 3]?.name) }));
    for (const pg of pingers) await startPinger(k, NS, pg.from?.name ?? '', pg.to?.ip ?? '');
    const m = migrationManifest();
    await k.mustKubectl(['apply', '-f', '-'], JSON.stringify(m.list));
    const fresh: PodView[] = [];
    for (const [i, n] of k.nodes.entries()) {
      const t0 = Date.now();
      await flannel.stop(n);
      const tStop = Date.now() - t0;
      await k.mustKubectl(['label', 'node', n.name, `${LABEL}=weft`]);
      await k.waitFor(`weft's pod Ready on ${n.name}`, async () => {
        const l = await k.control.call<{ items: Array<{ spec: { nodeName?: string }; status: { conditions?: Array<{ type: string; status: string }> } }> }>('GET', `/api/v1/namespaces/${m.dsNs}/pods`);
        return l.items.some((x) => x.spec.nodeName === n.name && x.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true);
      }, 180_000, 250);
      await k.waitFor(`${n.name}: weft's conflist`, () => { try { return readFileSync(join(n.cniConfDir, '10-flannel.conflist'), 'utf8') === m.conflist; } catch { return false; } }, 60_000, 250);
      assert.equal(statSync(join(n.cniBinDir, 'flannel')).ino, statSync(join(n.cniBinDir, 'weft')).ino, `${n.name}: flannel is weft's`);
      const tWeft = Date.now() - t0;
      await k.mustKubectl(['apply', '-f', '-'], JSON.stringify(httpdPod(`new${i}`, NS, KubeCluster.busyboxImage, n.name)));
      await k.waitFor(`new${i} Running`, async () => (await pods(`new${i}`)).some((x) => x.phase === 'Running' && x.ip !== ''), 120_000, 250);
      fresh.push(...(await pods(`new${i}`)));
      log(`${n.name} migrated to weft: flanneld stopped ${tStop} ms, weft's pod Ready and its conflist written ${tWeft} ms, a new pod Running ${Date.now() - t0} ms`);
      const other = old.find((x) => x.node !== n.name);
      assert.ok(other);
      await assertReach([...old, ...fresh], [fresh.at(-1) as PodView, other], [n], ` after ${n.name}`);
    }
    const reports = [];
    for (const pg of pingers) reports.push(await stopPinger(k, NS, pg.from?.name ?? '', pg.to?.ip ?? ''));
    log(`pings between old pods during the migration: ${reports.map(formatPingReport).join('; ')}`);
    log(`longest ping gap during the migration: ${Math.max(...reports.map((r) => r.longestGapMs))} ms`);
    for (const r of reports) assert.ok(r.received > 0, formatPingReport(r));
    await assertReach([...old, ...fresh], undefined, k.nodes, ' after the migration');
    assert.equal(readFileSync(join(k.nodes[0]?.cniBinDir ?? '', '.weft-replaced', 'flannel')).equals(readFileSync(FLANNEL_CNI)), true, 'flannel\'s plugin kept aside');
    const victim = old[0] as PodView;
    const node = k.nodes.find((n) => n.name === victim.node);
    assert.ok(node);
    await k.mustKubectl(['-n', NS, 'delete', 'pod', victim.name, '--wait=true']);
    await k.waitFor(`${victim.ip} freed on ${node.name}`, async () => !(await nodeLeftovers(node)).addresses.includes(victim.ip), 60_000, 250);
  });
});

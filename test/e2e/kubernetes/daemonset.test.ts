// Issue 31: deploy/weft.yaml applied with kubectl, as users apply it, to a real 3-node Kubernetes
// cluster on this machine (testkit/kube-cluster: kube-apiserver, kube-controller-manager allocating
// pod CIDRs, kube-scheduler, a kubelet + containerd per node namespace). The nodes start NotReady
// for want of a CNI config; weft's init container alone must make them Ready. Then a Deployment
// spread over the nodes: pod-to-pod and node-to-pod reachability, kubelet's HTTP probes, addresses
// freed on deletion, a hostPort, a rolling update of the DaemonSet under pings (then a pod with
// bandwidth annotations shaped), a scale 6 -> 30 -> 0 with leftovers counted, and a Node deleted.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeCluster } from '../../../testkit/kube-cluster/cluster.ts';
import { buildWeftImageArchive } from '../../../testkit/kube-cluster/image.ts';
import { formatLeftovers, nodeLeftovers, type NodeLeftovers } from '../../../testkit/kube-cluster/leftovers.ts';
import { formatPingReport, PING_INTERVAL_MS, startPinger, stopPinger } from '../../../testkit/kube-cluster/pinger.ts';
import { httpdPod, podShaping } from '../../../testkit/kube-cluster/pod-features.ts';
import { formatReachability, httpdDeployment, listPods, reachability, type PodView } from '../../../testkit/kube-cluster/workload.ts';
import { nsExec } from '../../../testkit/topology.ts';
import { configMapData, MANIFEST, manifestObject, podSpec } from '../deploy/helpers.ts';
import { daemonSetImage, failUnlessReady, imageArchive, skipOutsideCi, teardownCluster } from './helpers.ts';

const NS = 'weft-e2e';
const FOREIGN = '#!/bin/sh\necho the node\'s own bridge plugin\n';
const APP = 'web';
const HOST_PORT = 8080;
const log = (m: string): void => void process.stderr.write(`# ${m}\n`);

void describe('deploy/weft.yaml on a kubelet cluster', { skip: skipOutsideCi(), timeout: 900_000 }, () => {
  let k: KubeCluster;
  let imgDir: string;
  let baseline: NodeLeftovers[] = [];

  before(async () => {
    failUnlessReady();
    imgDir = mkdtempSync(join(tmpdir(), 'weft-kimg-'));
    process.on('exit', () => rmSync(imgDir, { recursive: true, force: true }));
    const t0 = Date.now();
    await buildWeftImageArchive(imgDir, daemonSetImage(), imageArchive(imgDir));
    log(`image ${daemonSetImage()} built (${Date.now() - t0} ms)`);
    k = await KubeCluster.create({ nodes: 3, images: [imageArchive(imgDir)], progress: log });
  }, { timeout: 600_000 });

  after(() => teardownCluster(k, imgDir, log));

  const pods = (): Promise<PodView[]> => listPods(k, NS, APP);
  const running = async (n: number): Promise<boolean> => {
    const p = await pods();
    return p.length === n && p.every((x) => x.phase === 'Running' && x.ready);
  };
  const scale = (n: number): Promise<string> => k.mustKubectl(['-n', NS, 'scale', `deployment/${APP}`, `--replicas=${n}`]);

  void it('the nodes register NotReady for want of a CNI config, with pod CIDRs from kube-controller-manager', async () => {
    await k.waitFor('every node NotReady (cni plugin not initialized) with a podCIDR', async () => {
      const s = await k.nodeStatuses();
      return s.length === 3 && s.every((n) => !n.ready && /cni plugin not initialized|NetworkPluginNotReady/.test(n.message) && n.podCidr !== undefined);
    }, 60_000);
    const cidrs = (await k.nodeStatuses()).map((n) => n.podCidr);
    assert.equal(new Set(cidrs).size, 3, `distinct pod CIDRs: ${cidrs.join(' ')}`);
    for (const n of k.nodes) assert.deepEqual(readdirSync(n.cniConfDir), [], `${n.name}: a CNI config before weft`);
    // The node's own reference plugins, which other networks may use: weft must keep them.
    const n1 = k.nodes[0];
    assert.ok(n1);
    writeFileSync(join(n1.cniBinDir, 'bridge'), FOREIGN, { mode: 0o755 });
    writeFileSync(join(n1.cniBinDir, 'macvlan'), FOREIGN, { mode: 0o755 });
  });

  void it('kubectl apply -f deploy/weft.yaml: the init container writes the executables and the conflist, and every node turns Ready', async () => {
    const t0 = Date.now();
    await k.mustKubectl(['apply', '-f', MANIFEST]);
    await k.waitFor('every node Ready', async () => (await k.nodeStatuses()).every((n) => n.ready), 180_000, 250);
    log(`nodes Ready ${Date.now() - t0} ms after kubectl apply`);
    for (const n of k.nodes) {
      assert.equal(readFileSync(join(n.cniConfDir, '10-flannel.conflist'), 'utf8'), configMapData()['cni-conf.json'], `${n.name}: the conflist`);
      const weft = statSync(join(n.cniBinDir, 'weft'));
      for (const p of ['flannel', 'bridge', 'host-local', 'portmap', 'loopback', 'bandwidth']) assert.equal(statSync(join(n.cniBinDir, p)).ino, weft.ino, `${n.name}: ${p} -> weft`);
      await k.waitFor(`${n.name}: subnet.env`, () => readdirSync(join(n.runDir, 'flannel')).includes('subnet.env'), 60_000);
    }
    const n1 = k.nodes[0];
    assert.ok(n1);
    assert.equal(readFileSync(join(n1.cniBinDir, '.weft-replaced', 'bridge'), 'utf8'), FOREIGN, 'the replaced bridge is kept');
    assert.equal(readFileSync(join(n1.cniBinDir, 'macvlan'), 'utf8'), FOREIGN, 'a plugin weft does not ship is left alone');
    assert.deepEqual(readdirSync(join(n1.cniBinDir, '.weft-replaced')), ['bridge']);
    for (const n of k.nodes.slice(1)) assert.ok(!existsSync(join(n.cniBinDir, '.weft-replaced')), `${n.name}: nothing was replaced there`);
    const pod = (await k.control.call<{ items: Array<{ metadata: { name: string }; spec: { nodeName: string } }> }>('GET', '/api/v1/namespaces/kube-weft/pods'))
      .items.find((p) => p.spec.nodeName === n1.name);
    assert.ok(pod, 'a weft pod on the first node');
    const logs = await k.mustKubectl(['-n', 'kube-weft', 'logs', pod.metadata.name, '-c', 'install-cni']);
    assert.match(logs, /\/host\/opt\/cni\/bin\/bridge was not weft's: kept as \/host\/opt\/cni\/bin\/\.weft-replaced\/bridge/);
    baseline = await Promise.all(k.nodes.map((n) => nodeLeftovers(n)));
    await k.mustKubectl(['create', 'namespace', NS]);
    await k.waitFor(`ServiceAccount default in ${NS}`, async () => (await k.control.curl('GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`)).stdout.includes('"uid"'), 60_000);
  });

  void it('a Deployment of 6 is spread 2/2/2; kubelet\'s HTTP probes pass; every pod and every node reaches every pod', async () => {
    await k.mustKubectl(['apply', '-f', '-'], JSON.stringify(httpdDeployment(APP, NS, 6, KubeCluster.busyboxImage)));
    const ms = await k.waitFor('6 pods Running and Ready', () => running(6), 180_000, 250);
    log(`6 pods Running and Ready (readiness probes passed) in ${ms} ms`);
    const p = await pods();
    const perNode = k.nodes.map((n) => p.filter((x) => x.node === n.name).length);
    assert.deepEqual(perNode, [2, 2, 2], 'topologySpreadConstraints');
    const statuses = await k.nodeStatuses();
    for (const x of p) {
      const cidr = statuses.find((s) => s.name === x.node)?.podCidr ?? '';
      assert.ok(x.ip.startsWith(cidr.split('.').slice(0, 3).join('.') + '.'), `${x.name} ${x.ip} is not in ${x.node}'s ${cidr}`);
    }
    const rows = await reachability(k, NS, p);
    log(`reachability:\n${formatReachability(rows, p)}`);
    for (const r of rows) assert.deepEqual(r.failed, [], `${r.from} cannot reach ${r.failed.join(', ')}${r.error !== undefined ? ` (${r.error})` : ''}`);
    // Liveness: several probe periods later, no container was restarted.
    await new Promise((res) => setTimeout(res, 6000));
    assert.deepEqual((await pods()).map((x) => x.restarts), [0, 0, 0, 0, 0, 0], 'a liveness probe failed');
  });

  void it('a hostPort pod is reached through its node\'s address from another node and from a pod on another node', async () => {
    const [n1, n2] = k.nodes;
    assert.ok(n1 && n2);
    await k.mustKubectl(['apply', '-f', '-'], JSON.stringify(httpdPod('hostport', NS, KubeCluster.busyboxImage, n1.name, { hostPort: HOST_PORT })));
    await k.waitFor('the hostPort pod Running', async () => (await listPods(k, NS, 'hostport')).some((x) => x.phase === 'Running'), 120_000, 250);
    const r = await nsExec(n2.netns, ['curl', '-fsS', '--max-time', '5', `http://${n1.ip}:${HOST_PORT}/index.html`]);
    assert.equal(r.code, 0, `${n2.name} -> ${n1.ip}:${HOST_PORT}: ${r.stderr}`);
    assert.match(r.stdout, /weft/);
    const from = (await pods()).find((x) => x.node === n2.name);
    assert.ok(from);
    const viaPod = await k.kubectl(['-n', NS, 'exec', from.name, '--', 'sh', '-c', `printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${n1.ip} ${HOST_PORT}`]);
    assert.match(viaPod.stdout, /200 OK[\s\S]*weft/, `${from.name} -> ${n1.ip}:${HOST_PORT}: ${viaPod.stderr}`);
    await k.mustKubectl(['-n', NS, 'delete', 'pod', 'hostport', '--wait=true']);
  });

  void it('a rolling update of the DaemonSet (new image tag, bandwidth added to the conflist): running pods keep reaching each other; then a pod with bandwidth annotations is shaped', async () => {
    const ds = manifestObject('DaemonSet');
    const cm = manifestObject('ConfigMap');
    const dsNs = ds.metadata.namespace ?? 'default';
    const newImage = `${daemonSetImage()}-rollout`;
    for (const n of k.nodes) {
      const t = await n.exec(['ctr', '-n', 'k8s.io', 'images', 'tag', daemonSetImage(), newImage]);
      assert.equal(t.code, 0, `${n.name}: ctr images tag: ${t.stderr}`);
    }
    const before = await pods();
    const pingers = k.nodes.map((n, i) => {
      const from = before.find((x) => x.node === n.name);
      const to = before.find((x) => x.node === k.nodes[(i + 1) % k.nodes.length]?.name);
      assert.ok(from && to, `pods on ${n.name} and the next node`);
      return { from, to };
    });
    for (const p of pingers) await startPinger(k, NS, p.from.name, p.to.ip);
    const oldPods = (await k.control.call<{ items: Array<{ metadata: { name: string } }> }>('GET', `/api/v1/namespaces/${dsNs}/pods`)).items.map((x) => x.metadata.name);
    const conf = JSON.parse(configMapData()['cni-conf.json'] ?? '{}') as { plugins: unknown[] };
    conf.plugins.push({ type: 'bandwidth', capabilities: { bandwidth: true } });
    const withBandwidth = JSON.stringify(conf, null, 2);
    await k.mustKubectl(['-n', dsNs, 'patch', 'configmap', cm.metadata.name, '--type', 'merge', '-p', JSON.stringify({ data: { 'cni-conf.json': withBandwidth } })]);
    const spec = podSpec();
    const t0 = Date.now();
    await k.mustKubectl(['-n', dsNs, 'patch', 'daemonset', ds.metadata.name, '--type', 'json', '-p', JSON.stringify([
      ...spec.initContainers.map((_, i) => ({ op: 'replace', path: `/spec/template/spec/initContainers/${i}/image`, value: newImage })),
      ...spec.containers.map((_, i) => ({ op: 'replace', path: `/spec/template/spec/containers/${i}/image`, value: newImage }))])]);
    await k.waitFor('the rollout done', async () => {
      const d = await k.control.call<{ metadata: { generation: number }; status: { observedGeneration?: number; desiredNumberScheduled?: number; updatedNumberScheduled?: number; numberAvailable?: number } }>(
        'GET', `/apis/apps/v1/namespaces/${dsNs}/daemonsets/${ds.metadata.name}`);
      const st = d.status;
      return (st.observedGeneration ?? 0) >= d.metadata.generation && st.desiredNumberScheduled === 3 && st.updatedNumberScheduled === 3 && st.numberAvailable === 3;
    }, 300_000, 250);
    log(`DaemonSet rolled out to ${newImage} in ${Date.now() - t0} ms`);
    const now = (await k.control.call<{ items: Array<{ metadata: { name: string }; spec: { containers: Array<{ image: string }> } }> }>('GET', `/api/v1/namespaces/${dsNs}/pods`)).items;
    assert.ok(now.every((x) => !oldPods.includes(x.metadata.name) && x.spec.containers.every((c) => c.image === newImage)), `not every weft pod was replaced: ${now.map((x) => x.metadata.name).join(' ')}`);
    await new Promise((res) => setTimeout(res, 2000));
    const reports = [];
    for (const p of pingers) reports.push(await stopPinger(k, NS, p.from.name, p.to.ip));
    log(`pings during the rollout (every ${PING_INTERVAL_MS} ms): ${reports.map(formatPingReport).join('; ')}`);
    log(`longest ping gap during the rollout: ${Math.max(...reports.map((r) => r.longestGapMs))} ms`);
    for (const r of reports) assert.ok(r.received > 0, `no reply at all: ${formatPingReport(r)}`);
    const rows = await reachability(k, NS, await pods());
    for (const r of rows) assert.deepEqual(r.failed, [], `after the rollout ${r.from} cannot reach ${r.failed.join(', ')}`);
    for (const n of k.nodes) assert.equal(readFileSync(join(n.cniConfDir, '10-flannel.conflist'), 'utf8'), withBandwidth, `${n.name}: the new conflist`);

    const n2 = k.nodes[1];
    assert.ok(n2);
    await k.mustKubectl(['apply', '-f', '-'], JSON.stringify(httpdPod('shaped', NS, KubeCluster.busyboxImage, n2.name,
      { annotations: { 'kubernetes.io/ingress-bandwidth': '1M', 'kubernetes.io/egress-bandwidth': '2M' } })));
    await k.waitFor('the shaped pod Running', async () => (await listPods(k, NS, 'shaped')).some((x) => x.phase === 'Running'), 120_000, 250);
    const iflink = Number((await k.mustKubectl(['-n', NS, 'exec', 'shaped', '--', 'cat', '/sys/class/net/eth0/iflink'])).trim());
    const sh = await podShaping(n2, iflink);
    log(`shaped pod: ${sh.veth}: ${sh.vethQdiscs.trim()} | ${sh.ifb ?? 'no ifb'}: ${sh.ifbQdiscs.trim()}`);
    assert.match(sh.vethQdiscs, /qdisc tbf \S+ root .*rate 1Mbit/, `ingress (to the pod) shaping on ${sh.veth}`);
    assert.ok(sh.ifb !== undefined, `no redirect to a bwp ifb on ${sh.veth}`);
    assert.match(sh.ifbQdiscs, /qdisc tbf \S+ root .*rate 2Mbit/, `egress shaping on ${sh.ifb}`);
    await k.mustKubectl(['-n', NS, 'delete', 'pod', 'shaped', '--wait=true']);
    await k.waitFor(`${sh.ifb} removed`, async () => !(await nsExec(n2.netns, ['ip', 'link', 'show'])).stdout.includes(sh.ifb ?? '-'), 60_000, 250);
  });

  void it('deleting pods frees their addresses and leaves no veth, netns, cached result or nft element', async () => {
    const before = await pods();
    const victims = before.slice(0, 2);
    await k.mustKubectl(['-n', NS, 'delete', 'pod', '--wait=true', ...victims.map((v) => v.name)]);
    await k.waitFor('replacements Running', () => running(6), 120_000, 250);
    const all = (await Promise.all(k.nodes.map((n) => nodeLeftovers(n)))).flatMap((l) => l.addresses);
    for (const v of victims) {
      const now = (await pods()).map((x) => x.ip);
      if (!now.includes(v.ip)) assert.ok(!all.includes(v.ip), `${v.ip} of deleted ${v.name} is still allocated`);
    }
    assert.equal(all.length, 6, `allocations: ${all.join(' ')}`);
  });

  void it('scale 6 -> 30 -> 0: every pod Running, then nothing left on any node', async () => {
    await scale(30);
    const up = await k.waitFor('30 pods Running and Ready', () => running(30), 300_000, 500);
    log(`30 pods Running and Ready in ${up} ms`);
    await scale(0);
    await k.waitFor('no pod left', async () => (await pods()).length === 0, 300_000, 500);
    await k.waitFor('per-pod state gone on every node', async () => {
      const l = await Promise.all(k.nodes.map((n) => nodeLeftovers(n)));
      return l.every((x, i) => x.addresses.length === 0 && x.veths === 0 && x.podNetns === 0 && x.cniResults === 0 && x.nftElements <= (baseline[i]?.nftElements ?? 0));
    }, 60_000, 500).catch(async (e: unknown) => {
      const l = await Promise.all(k.nodes.map((n) => nodeLeftovers(n)));
      throw new Error(`${(e as Error).message}: ${l.map((x, i) => `${k.nodes[i]?.name}: ${formatLeftovers(x)}`).join('; ')}`);
    });
    const l = await Promise.all(k.nodes.map((n) => nodeLeftovers(n)));
    log(`after scale to 0: ${l.map((x, i) => `${k.nodes[i]?.name}: ${formatLeftovers(x)} (baseline nft ${baseline[i]?.nftElements})`).join('; ')}`);
  });

  void it('deleting a Node removes its route and FDB entries from the other nodes', async () => {
    const gone = k.nodes[2];
    assert.ok(gone);
    const cidr = (await k.nodeStatuses()).find((s) => s.name === gone.name)?.podCidr;
    assert.ok(cidr);
    const routes = async (netns: string): Promise<string> => (await nsExec(netns, ['ip', 'route', 'show'])).stdout;
    const fdb = async (netns: string): Promise<string> => (await nsExec(netns, ['bridge', 'fdb', 'show', 'dev', 'flannel.1'])).stdout;
    for (const n of k.nodes.slice(0, 2)) {
      assert.ok((await routes(n.netns)).includes(cidr), `${n.name} has no route to ${cidr} before`);
      assert.ok((await fdb(n.netns)).includes(`dst ${gone.ip}`), `${n.name} has no FDB entry to ${gone.ip} before`);
    }
    // Without its kubelet, nothing registers the Node again.
    await gone.killKubelet();
    await k.mustKubectl(['delete', 'node', gone.name]);
    for (const n of k.nodes.slice(0, 2)) {
      await k.waitFor(`${n.name}: route and FDB entry of ${gone.name} removed`, async () =>
        !(await routes(n.netns)).includes(cidr) && !(await fdb(n.netns)).includes(`dst ${gone.ip}`), 60_000, 250);
    }
  });
});

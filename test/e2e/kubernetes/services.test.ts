// Issue 31, a cluster without kube-proxy: deploy/weft.yaml applied with weftd --service-proxy and
// --network-policy turned on as its comments say, on the kit's kubelet cluster with no stand-in for
// the `kubernetes` Service. weftd alone then serves Services: CoreDNS (kube-dns, built from the Go
// module proxy) lists the API through the `kubernetes` ClusterIP and answers the pods; pods on every
// node reach a Service by the name it resolves to; a NetworkPolicy on the Service's pods is enforced
// through the ClusterIP and lifted when deleted. Skipped, loudly, when CoreDNS is not built
// (scripts/coredns-setup.sh).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeCluster } from '../../../testkit/kube-cluster/cluster.ts';
import { CLUSTER_DNS_IP, clusterDnsMissing } from '../../../testkit/kube-cluster/dns.ts';
import { buildWeftImageArchive } from '../../../testkit/kube-cluster/image.ts';
import { httpdPod } from '../../../testkit/kube-cluster/pod-features.ts';
import { httpdDeployment, listPods } from '../../../testkit/kube-cluster/workload.ts';
import { nsExec } from '../../../testkit/topology.ts';
import { daemonSetImage, failUnlessReady, imageArchive, skipOutsideCi, teardownCluster } from './helpers.ts';

const NS = 'weft-svc-e2e';
const log = (m: string): void => void process.stderr.write(`# ${m}\n`);

function skip(): string | false {
  const s = skipOutsideCi();
  if (s !== false) return s;
  const dns = clusterDnsMissing();
  if (dns === undefined) return false;
  const msg = `########## SKIPPED kubelet cluster Services e2e: ${dns} ##########`;
  process.stderr.write(`${msg}\n`);
  return msg;
}

void describe('weftd --service-proxy --network-policy with cluster DNS on a kubelet cluster', { skip: skip(), timeout: 900_000 }, () => {
  let k: KubeCluster;
  let imgDir: string;
  let clusterIp = '';
  const clients = (): string[] => k.nodes.map((_, i) => `client-${i + 1}`);
  // busybox's own resolver (nslookup: the image's static busybox cannot use libc's) with the pod's
  // resolv.conf, then HTTP/1.0 over nc to the address it names; the image links only a few applets.
  const fetchByName = (pod: string, name: string): Promise<{ code: number; stdout: string; stderr: string }> =>
    k.kubectl(['-n', NS, 'exec', pod, '--', 'sh', '-c',
      `ip=$(busybox nslookup -type=a ${name} 2>/dev/null | busybox sed -n 's/^Address: *//p' | busybox tail -n 1); echo "ip=$ip"; ` +
      `[ -n "$ip" ] && printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | nc -w 3 "$ip" 80`]);
  const reaches = async (pod: string): Promise<boolean> => {
    const r = await fetchByName(pod, `web.${NS}.svc.cluster.local`);
    return r.code === 0 && r.stdout.includes(`ip=${clusterIp}`) && r.stdout.includes('200 OK') && r.stdout.includes('weft');
  };

  before(async () => {
    failUnlessReady();
    imgDir = mkdtempSync(join(tmpdir(), 'weft-ksvc-'));
    process.on('exit', () => rmSync(imgDir, { recursive: true, force: true }));
    await buildWeftImageArchive(imgDir, daemonSetImage(), imageArchive(imgDir));
    k = await KubeCluster.create({ nodes: 2, images: [imageArchive(imgDir)], dns: true, apiServiceDnat: false, progress: log });
  }, { timeout: 600_000 });

  after(() => teardownCluster(k, imgDir, log));

  void it('with --service-proxy weftd reaches the API at its own address and every node turns Ready; the kubernetes Service is weft\'s', async () => {
    const t0 = Date.now();
    await k.applyWeft({ serviceProxy: true, networkPolicy: true });
    await k.waitFor('every node Ready', async () => (await k.nodeStatuses()).every((n) => n.ready), 180_000, 250);
    log(`apply -> every node Ready in ${Date.now() - t0} ms`);
    for (const n of k.nodes) {
      const tables = (await nsExec(n.netns, ['nft', 'list', 'tables'])).stdout;
      assert.doesNotMatch(tables, /weft-kit-svc/, `${n.name}: the kit's DNAT stand-in is there`);
      await k.waitFor(`${n.name}: the kubernetes Service in inet weft-svc`, async () =>
        (await nsExec(n.netns, ['nft', 'list', 'table', 'inet', 'weft-svc'])).stdout.includes(k.control.ranges.apiServiceIp), 60_000, 500);
    }
  });

  void it('CoreDNS turns Ready as kube-dns: it lists the API through weft\'s kubernetes ClusterIP', async () => {
    const ms = await k.deployDns();
    log(`CoreDNS (2 replicas) applied -> Ready in ${ms} ms`);
  });

  void it('pods on every node resolve a Service through kube-dns and reach it by the ClusterIP', async () => {
    await k.mustKubectl(['create', 'namespace', NS]);
    await k.mustKubectl(['apply', '-f', '-'], JSON.stringify(httpdDeployment('web', NS, 2, KubeCluster.busyboxImage)));
    await k.mustKubectl(['-n', NS, 'expose', 'deployment/web', '--port', '80']);
    clusterIp = (await k.mustKubectl(['-n', NS, 'get', 'service', 'web', '-o', 'jsonpath={.spec.clusterIP}'])).trim();
    for (const [i, c] of clients().entries()) {
      await k.mustKubectl(['apply', '-f', '-'], JSON.stringify(httpdPod(c, NS, KubeCluster.busyboxImage, k.nodes[i]?.name ?? '')));
    }
    await k.waitFor('web and clients Running and Ready', async () => {
      const all = [...await listPods(k, NS, 'web'), ...(await Promise.all(clients().map((c) => listPods(k, NS, c)))).flat()];
      return all.length === 2 + clients().length && all.every((p) => p.phase === 'Running' && p.ready);
    }, 120_000, 500);
    for (const c of clients()) {
      const conf = await k.mustKubectl(['-n', NS, 'exec', c, '--', 'cat', '/etc/resolv.conf']);
      assert.match(conf, new RegExp(`nameserver ${CLUSTER_DNS_IP.replace(/\./g, '\\.')}`), `${c}: resolv.conf`);
      assert.match(conf, new RegExp(`search ${NS}\\.svc\\.cluster\\.local svc\\.cluster\\.local cluster\\.local`), `${c}: resolv.conf`);
      await k.waitFor(`${c} fetches web.${NS}.svc.cluster.local`, () => reaches(c), 60_000, 1000);
      const short = await fetchByName(c, 'kubernetes.default.svc.cluster.local');
      assert.match(short.stdout, new RegExp(`ip=${k.control.ranges.apiServiceIp.replace(/\./g, '\\.')}\\b`), `${c}: kubernetes.default`);
    }
  });

  void it('a NetworkPolicy on the Service\'s pods admits the labelled client only, through the ClusterIP; deleted, it admits both', async () => {
    const [allowed, denied] = clients();
    assert.ok(allowed !== undefined && denied !== undefined);
    await k.mustKubectl(['-n', NS, 'label', 'pod', allowed, 'access=yes']);
    const policy = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'web-from-access', namespace: NS },
      spec: { podSelector: { matchLabels: { app: 'web' } }, policyTypes: ['Ingress'], ingress: [{ from: [{ podSelector: { matchLabels: { access: 'yes' } } }] }] } };
    await k.mustKubectl(['apply', '-f', '-'], JSON.stringify(policy));
    await k.waitFor(`${denied} refused by the policy`, async () => !(await reaches(denied)), 30_000, 500);
    for (let i = 0; i < 3; i++) {
      assert.ok(await reaches(allowed), `${allowed} (access=yes) is refused`);
      assert.ok(!(await reaches(denied)), `${denied} is admitted under the policy`);
    }
    await k.mustKubectl(['-n', NS, 'delete', 'networkpolicy', 'web-from-access']);
    await k.waitFor(`${denied} admitted again`, () => reaches(denied), 30_000, 500);
    assert.ok(await reaches(allowed));
  });
});

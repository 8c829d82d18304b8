// `weft doctor --kube-subnet-mgr` on a 2-node vxlan cluster whose leases are Nodes of a real
// kube-apiserver: clean on a healthy node (the leases and this node's podCIDR and annotations read
// from the API), then this node's annotations gone, a Node with no podCIDR, an unknown node name;
// and on a DaemonSet node (in a pod's environment) every fix in kubectl words, none with systemctl.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Cluster, type ClusterNode } from '../../../testkit/cluster.ts';
import { nsExec } from '../../../testkit/topology.ts';
import { nodeConfDir, problemsOf, skipReason, WEFT, type DoctorReport } from './helpers.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

void describe('weft doctor on a --kube-subnet-mgr node', { skip: skipReason(), timeout: 240_000 }, () => {
  let c: Cluster;
  let n1: ClusterNode;
  before(async () => {
    c = await Cluster.create({ backend: 'vxlan', store: 'kube', nodes: 2, podsPerNode: 1 });
    n1 = c.nodes[0] as ClusterNode;
  });
  after(() => c?.destroy());

  const args = (n: ClusterNode, nodeName = n.netns): string[] => ['--kube-subnet-mgr', '--kubeconfig-file', c.kube?.kubeconfig ?? '', '--node-name', nodeName,
    '--net-conf', c.netConfPath, '--iface', n.uplink, '--subnet-file', n.subnetFile, '--ipam-data-dir', join(n.dir, 'ipam'),
    '--cni-conf-dir', nodeConfDir(c, n), '--cni-bin-dir', join(ROOT, 'dist', 'bin'), '--metrics-addr', '127.0.0.1:9101'];
  const doctor = async (n: ClusterNode, extra: string[] = [], env: string[] = []): Promise<DoctorReport> => {
    const r = await nsExec(n.netns, ['env', ...env, 'node', WEFT, 'doctor', '--json', ...extra], { timeoutMs: 30_000 });
    assert.ok(r.code === 0 || r.code === 1, `doctor exit ${String(r.code)}: ${r.stderr}`);
    return JSON.parse(r.stdout) as DoctorReport;
  };

  void it('reports a healthy node clean, its lease and the peers read from the Nodes', async () => {
    const r = await doctor(n1, args(n1));
    assert.equal(r.ok, true, JSON.stringify(r.problems));
    const kube = r.checks.find((x) => x.check === 'kube');
    assert.equal(kube?.status, 'ok');
    assert.equal(kube?.facts['podCIDR'], n1.subnet);
    assert.equal(kube?.facts['nodes'], 2);
    const lease = r.checks.find((x) => x.check === 'lease');
    assert.match(String(lease?.facts['source']), /^kube:https:\/\//);
    assert.equal(lease?.facts['subnet'], n1.subnet);
    assert.equal(r.checks.find((x) => x.check === 'peers')?.facts['inPlace'], 3);
  });

  void it("names a Node weftd has not annotated, and on a DaemonSet node says kubectl, never systemctl", async () => {
    n1.weftd?.kill('SIGSTOP');
    const prefix = 'flannel.alpha.coreos.com';
    const node = await c.kube?.call('GET', `/api/v1/nodes/${n1.netns}`) as { metadata: { annotations: Record<string, string> } };
    const saved = Object.fromEntries(Object.entries(node.metadata.annotations).filter(([k]) => k.startsWith(`${prefix}/`)));
    try {
      await c.kube?.call('PATCH', `/api/v1/nodes/${n1.netns}`, { metadata: { annotations: Object.fromEntries(Object.keys(saved).map((k) => [k, null])) } }, 'application/strategic-merge-patch+json');
      const r = await doctor(n1, args(n1));
      const kube = problemsOf(r, 'kube');
      assert.equal(kube.length, 1, JSON.stringify(r.problems));
      assert.match(kube[0]?.detail ?? '', new RegExp(`^Node ${n1.netns} lacks ${prefix}/kube-subnet-manager, ${prefix}/backend-type, ${prefix}/public-ip, ${prefix}/backend-data: weftd has not announced this node`));
      // In the weft pod's environment (the API's in-cluster variables set): the DaemonSet's words.
      const ds = await doctor(n1, args(n1), ['KUBERNETES_SERVICE_HOST=192.0.2.3', 'KUBERNETES_SERVICE_PORT=6443']);
      assert.ok(ds.problems.length >= 2, JSON.stringify(ds.problems));
      for (const p of ds.problems) assert.doesNotMatch(p.fix, /systemctl|journalctl/, JSON.stringify(p));
      assert.match(problemsOf(ds, 'weftd')[0]?.fix ?? '', /kubectl -n kube-weft get pods -l app=weft -o wide --field-selector spec\.nodeName=/);
      assert.match(problemsOf(ds, 'kube')[0]?.fix ?? '', /kubectl -n kube-weft logs -c weftd/);
    } finally {
      await c.kube?.call('PATCH', `/api/v1/nodes/${n1.netns}`, { metadata: { annotations: saved } }, 'application/strategic-merge-patch+json');
      n1.weftd?.kill('SIGCONT');
    }
  });

  void it('names a Node without podCIDR and an unknown node name', async () => {
    const ghost = `${n1.netns}-ghost`;
    await c.kube?.call('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: ghost } });
    try {
      const r = await doctor(n1, args(n1, ghost));
      const kube = problemsOf(r, 'kube');
      assert.ok(kube.some((p) => p.detail.startsWith(`Node ${ghost} has no IPv4 spec.podCIDR`) && p.fix.includes('--allocate-node-cidrs=true')), JSON.stringify(kube));
    } finally {
      await c.kube?.deleteNode(ghost);
    }
    const r = await doctor(n1, args(n1, 'no-such-node'));
    assert.match(problemsOf(r, 'kube')[0]?.detail ?? '', /^no Node named "no-such-node" among the 2 Nodes/);
  });
});

// Issue 18: flanneld --kube-subnet-mgr (the real one, built by scripts/flannel-setup.sh) on node 1
// and weftd --kube-subnet-mgr on nodes 2 and 3, against one real kube-apiserver. Every pod reaches
// every pod; each side publishes flannel's node annotations and programs the kernel entries the
// other side's annotations call for (vxlan: route + neighbour + FDB; host-gw: a route via the node;
// udp: the Network into flannel0, the peers in the forwarder).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { Cluster, type ClusterNode, waitFor } from '../../../testkit/cluster.ts';
import { kubeBinariesPresent } from '../../../testkit/kube-apiserver.ts';
import { assertProgrammedFor, pingOnce, FLANNEL_CNI, skipReason, vtepLink } from './helpers.ts';
import { P, routesTo } from './kube-helpers.ts';

const FLANNELD = `${process.env['WEFT_CACHE_DIR'] ?? '/var/cache/weft'}/go-bin/flannel-v0.28.10/flannel`;

function skip(): string | false {
  return skipReason() || (kubeBinariesPresent() ? false : 'kube-apiserver not built: run scripts/kube-setup.sh') ||
    (existsSync(FLANNELD) ? false : `${FLANNELD} missing: run scripts/flannel-setup.sh`) ||
    (existsSync(FLANNEL_CNI) ? false : `${FLANNEL_CNI} missing: run scripts/flannel-cni-setup.sh`);
}

type Annotations = Record<string, string>;

async function annotationsOf(c: Cluster, n: ClusterNode): Promise<Annotations> {
  assert.ok(c.kube);
  const node = await c.kube.call('GET', `/api/v1/nodes/${n.netns}`) as { metadata: { annotations?: Annotations } };
  return node.metadata.annotations ?? {};
}

for (const backend of ['vxlan', 'host-gw', 'udp'] as const) {
  void describe(`kube cluster, ${backend}: flanneld --kube-subnet-mgr on node 1, weftd on nodes 2 and 3`, { skip: skip(), timeout: 300_000 }, () => {
    let c: Cluster;
    before(async () => {
      c = await Cluster.create({
        backend, store: 'kube', nodes: 3, podsPerNode: 1,
        // NAT-free pod traffic on both kinds of node (flanneld runs without --ip-masq).
        delegate: { ipMasq: false }, flanneld: { bin: FLANNELD, nodes: [1], cniBin: FLANNEL_CNI },
        onProgress: (m) => process.stderr.write(`  ${m}\n`),
      });
    });
    after(() => c?.destroy());

    it('both publish flannel\'s annotations, read each other\'s, and every pod reaches every pod', async (t) => {
      // Both agents start together; the last one's annotations reach the others through their watches.
      await waitFor('every node reaches both peers', async () => {
        for (const n of c.nodes) {
          for (const p of c.nodes) {
            if (p === n) continue;
            if (backend !== 'udp' && (await routesTo(n, p.subnet as string)).length !== 1) return false;
            const [a, b] = [c.pods.find((x) => x.node === n), c.pods.find((x) => x.node === p)];
            if (backend === 'udp' && a && b && !(await pingOnce(a.netns, b.ip))) return false;
          }
        }
        return true;
      }, 10_000, 100);
      for (const n of c.nodes) {
        const a = await annotationsOf(c, n);
        const who = `${n.netns} (${c.runsFlanneld(n) ? 'flanneld' : 'weftd'})`;
        // flanneld's udp backend publishes an empty backend-type (it has none in etcd mode either).
        const type = backend === 'udp' && c.runsFlanneld(n) ? '' : backend;
        assert.deepEqual([a[`${P}/backend-type`], a[`${P}/public-ip`], a[`${P}/kube-subnet-manager`]], [type, n.ip, 'true'], `${who} annotations`);
        const data = JSON.parse(a[`${P}/backend-data`] ?? 'undefined') as unknown;
        if (backend === 'vxlan') assert.deepEqual(data, { VNI: 1, VtepMAC: (await vtepLink(n))?.address }, `${who} backend-data`);
        else assert.equal(data, null, `${who} backend-data`);
      }
      const [f, ...w] = c.nodes as [ClusterNode, ...ClusterNode[]];
      for (const n of w) {
        await assertProgrammedFor(n, f, backend);
        await assertProgrammedFor(f, n, backend);
        const complaints = c.weftdLog(n).split('\n').filter((l) => /"level":"(warn|error)"/.test(l));
        assert.deepEqual(complaints, [], `${n.netns}: weftd warnings`);
      }
      const bad: string[] = [];
      for (const a of c.pods) for (const b of c.pods) {
        if (a !== b && !(await pingOnce(a.netns, b.ip)) && !(await pingOnce(a.netns, b.ip))) bad.push(`${a.name}->${b.name}`);
      }
      assert.deepEqual(bad, []);
      assert.deepEqual(c.flanneldLog(f).split('\n').filter((l) => /^E\d{4}/.test(l)), [], 'flanneld errors');
      t.diagnostic(`subnets: ${c.nodes.map((n) => `${n.netns}=${n.subnet}`).join(' ')}`);
    });
  });
}

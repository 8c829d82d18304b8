// Issue 27 item 7: the flannel.alpha.coreos.com/public-ip-overwrite node annotation (what k3s
// --flannel-external-ip sets for NAT'd nodes), against a real kube-apiserver, with the real flanneld
// on node 1 and weftd on nodes 2 and 3. Nodes 1 and 2 are annotated with an extra address each (a
// /32 on their uplink stands in for the NAT's public side) and their agents restarted: each publishes
// the overwrite as public-ip, keeps its own address as its VTEP's local address, every peer (flanneld
// or weftd) sends to the overwrite (FDB dst), and every pod still reaches every pod.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { Cluster, type ClusterNode, waitFor } from '../../../testkit/cluster.ts';
import { kubeBinariesPresent } from '../../../testkit/kube-apiserver.ts';
import { nsRun } from '../../../testkit/topology.ts';
import { FLANNEL_CNI, pingOnce, skipReason, vtepFdb, vtepLink } from './helpers.ts';
import { P } from './kube-helpers.ts';

const FLANNELD = `${process.env['WEFT_CACHE_DIR'] ?? '/var/cache/weft'}/go-bin/flannel-v0.28.10/flannel`;

function skip(): string | false {
  return skipReason() || (kubeBinariesPresent() ? false : 'kube-apiserver not built: run scripts/kube-setup.sh') ||
    (existsSync(FLANNELD) ? false : `${FLANNELD} missing: run scripts/flannel-setup.sh`) ||
    (existsSync(FLANNEL_CNI) ? false : `${FLANNEL_CNI} missing: run scripts/flannel-cni-setup.sh`);
}

/** The address standing in for node `id`'s NAT side. */
const outside = (id: number): string => `192.0.2.${100 + id}`;

void describe('kube cluster, vxlan: public-ip-overwrite on a flanneld and a weftd node', { skip: skip(), timeout: 180_000 }, () => {
  let c: Cluster;
  before(async () => {
    c = await Cluster.create({
      backend: 'vxlan', store: 'kube', nodes: 3, podsPerNode: 1, delegate: { ipMasq: false },
      flanneld: { bin: FLANNELD, nodes: [1], cniBin: FLANNEL_CNI },
    });
  });
  after(() => c?.destroy());

  it('published as public-ip, the VTEP keeps the own address, peers send to the overwrite, pods reach each other', async () => {
    assert.ok(c.kube);
    const kube = c.kube;
    const [f, w, plain] = c.nodes as [ClusterNode, ClusterNode, ClusterNode];
    for (const n of [f, w]) {
      await nsRun(n.netns, ['ip', 'addr', 'add', `${outside(n.id)}/32`, 'dev', n.uplink]);
      await kube.call('PATCH', `/api/v1/nodes/${n.netns}`, { metadata: { annotations: { [`${P}/public-ip-overwrite`]: outside(n.id) } } }, 'application/strategic-merge-patch+json');
    }
    await c.stopFlanneld(f);
    await c.startFlanneld(f);
    await c.stopWeftd(w);
    await c.startWeftd(w);
    const publicIp = async (n: ClusterNode): Promise<string | undefined> =>
      ((await kube.call('GET', `/api/v1/nodes/${n.netns}`)) as { metadata: { annotations?: Record<string, string> } }).metadata.annotations?.[`${P}/public-ip`];
    const want = (n: ClusterNode): string => (n === plain ? n.ip : outside(n.id));
    // flanneld's subnet.env survives its restart, so its start is seen in the annotation.
    await waitFor('the overwrites published', async () => (await publicIp(f)) === want(f), 30_000, 200);
    for (const n of c.nodes) assert.equal(await publicIp(n), want(n), `${n.netns} public-ip`);
    // Each VTEP's local address is its own node address, whoever runs it.
    for (const n of c.nodes) {
      const d = JSON.parse(await nsRun(n.netns, ['ip', '-d', '-j', 'link', 'show', 'flannel.1'])) as Array<{ linkinfo?: { info_data?: { local?: string } } }>;
      assert.equal(d[0]?.linkinfo?.info_data?.local, n.ip, `${n.netns} VTEP local`);
    }
    // Every node's FDB sends to each peer's published address.
    await waitFor('every FDB names the published addresses', async () => {
      for (const n of c.nodes) {
        const fdb = await vtepFdb(n);
        for (const p of c.nodes) {
          if (p === n) continue;
          const mac = (await vtepLink(p))?.address;
          if (!fdb.some((e) => e.mac === mac && e.dst === want(p))) return false;
        }
      }
      return true;
    }, 15_000, 200);
    const bad: string[] = [];
    for (const a of c.pods) for (const b of c.pods) {
      if (a !== b && !(await pingOnce(a.netns, b.ip)) && !(await pingOnce(a.netns, b.ip))) bad.push(`${a.name}->${b.name}`);
    }
    assert.deepEqual(bad, []);
    const complaints = [w, plain].flatMap((n) => c.weftdLog(n).split('\n').filter((l) => /"level":"(warn|error)"/.test(l)));
    assert.deepEqual(complaints, []);
  });
});

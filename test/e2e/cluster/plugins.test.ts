// The flannel-vxlan / host-gw plugins as a runtime drives them inside a cluster node: code 11
// without subnet.env, the delegate config stored under dataDir and replayed by DEL (a second DEL
// and a DEL of an unknown container succeed), CHECK through the delegate, and flannel-vxlan
// re-creating a missing VTEP.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster, waitFor, type ClusterNode } from '../../../testkit/cluster.ts';
import { PluginFailure } from '../../../testkit/cni-runner.ts';
import { nsExec, nsRun } from '../../../testkit/topology.ts';
import { pingOnce, skipReason, vtepLink } from './helpers.ts';

void describe('flannel-vxlan plugin in a cluster', { skip: skipReason(), timeout: 120_000 }, () => {
  let c: Cluster;
  let n1: ClusterNode;
  before(async () => {
    // ChecksumOffload off: the last test checks that weftd applies it to a VTEP it did not create.
    c = await Cluster.create({ backend: 'vxlan', store: 'file', nodes: 2, podsPerNode: 1, backendConf: { ChecksumOffload: 'off' } });
    n1 = c.nodes[0] as ClusterNode;
  });
  after(() => c?.destroy());

  it('stores the rendered delegate under dataDir; DEL replays it and removes it; DEL again succeeds', async () => {
    const pod = await c.addPod(n1, 5);
    const stored = join(n1.dir, 'flannel', pod.containerId);
    const conf = JSON.parse(readFileSync(stored, 'utf8')) as Record<string, unknown>;
    assert.equal(conf['type'], 'bridge');
    assert.equal(conf['isGateway'], true);
    assert.equal(conf['mtu'], 1450);
    assert.equal(conf['ipMasq'], true, 'FLANNEL_IPMASQ=false: the bridge masquerades');
    assert.deepEqual((conf['ipam'] as Record<string, unknown>)['ranges'], [[{ subnet: n1.subnet }]]);
    assert.deepEqual((conf['ipam'] as Record<string, unknown>)['routes'], [{ dst: '10.244.0.0/16' }]);
    const att = { containerId: pod.containerId, netns: pod.path, ifName: 'eth0' };
    await n1.runner.check(att); // CHECK replays the stored config with the cached prevResult
    await nsRun(pod.netns, ['ip', 'addr', 'flush', 'dev', 'eth0']);
    await assert.rejects(n1.runner.check(att), PluginFailure, 'CHECK notices the missing address');
    await c.delPod(pod);
    assert.equal(existsSync(stored), false);
    const links = await nsRun(pod.netns, ['ip', '-o', 'link']);
    assert.doesNotMatch(links, /eth0/, 'the pod interface is gone');
    await n1.runner.del(att);
    await n1.runner.del({ ...att, containerId: 'never-added' });
  });

  it('without subnet.env: code 11 (try again later), and nothing stored', async () => {
    renameSync(n1.subnetFile, `${n1.subnetFile}.away`);
    try {
      const sim = await c.topo.addPod(n1, 6);
      await assert.rejects(n1.runner.add({ containerId: 'no-env', netns: sim.path, ifName: 'eth0' }),
        (e: unknown) => e instanceof PluginFailure && e.cniCode === 11);
      assert.equal(existsSync(join(n1.dir, 'flannel', 'no-env')), false);
    } finally {
      renameSync(`${n1.subnetFile}.away`, n1.subnetFile);
    }
  });

  it('re-creates a missing VTEP (same MAC) when weftd is not running; weftd then restores the peers', async () => {
    const before = await vtepLink(n1);
    assert.equal(await c.stopWeftd(n1), 0);
    await nsRun(n1.netns, ['ip', 'link', 'del', 'flannel.1']);
    const pod = await c.addPod(n1, 7);
    const now = await vtepLink(n1);
    assert.ok(now, 'the plugin re-created flannel.1');
    assert.equal(now.address, before?.address);
    assert.equal(now.mtu, 1450);
    const d = await nsRun(n1.netns, ['ip', '-d', 'link', 'show', 'flannel.1']);
    assert.match(d, /vxlan id 1 local 192\.0\.2\.11 dev eth0 .*dstport 8472 nolearning/);
    await c.startWeftd(n1);
    const remote = c.pods.find((p) => p.node !== n1);
    assert.ok(remote);
    await waitFor('traffic through the re-created VTEP', () => pingOnce(pod.netns, remote.ip), 5000, 50);
    const tx = await nsExec(n1.netns, ['ethtool', '-k', 'flannel.1']);
    assert.match(tx.stdout, /tx-checksum-ip-generic: off/, 'weftd applied ChecksumOffload "off" to the new device');
  });
});

// `weft doctor` with leases in etcd (net-conf at <prefix>/config, flannel's way) on the udp backend:
// clean when healthy, the lease's expiry read from its etcd lease; a lost Network route via flannel0
// and a lease deleted from etcd are named.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { Cluster, type ClusterNode } from '../../../testkit/cluster.ts';
import { nsRun } from '../../../testkit/topology.ts';
import { assertClean, doctor, problemsOf, skipReason } from './helpers.ts';

const noEtcd = ['/usr/bin/etcd', '/usr/local/bin/etcd'].some((p) => existsSync(p)) ? false : 'etcd not installed';

void describe('weft doctor on a udp node, leases in etcd', { skip: skipReason() || noEtcd, timeout: 120_000 }, () => {
  let c: Cluster;
  let n1: ClusterNode;
  before(async () => {
    c = await Cluster.create({ backend: 'udp', store: 'etcd', netConfInEtcd: true, nodes: 2, podsPerNode: 1 });
    [n1] = c.nodes as [ClusterNode];
  });
  after(() => c?.destroy());

  void it('reports clean with the lease from etcd and its expiry', async () => {
    const r = await doctor(c, n1);
    assertClean(r);
    const lease = r.checks.find((x) => x.check === 'lease');
    assert.equal(lease?.facts['subnet'], n1.subnet);
    assert.match(String(lease?.facts['source']), /^etcd:http/);
    const left = Number(lease?.facts['expiresInSeconds']);
    assert.ok(left > 3600 && left <= 86400, `expiry ${left} s from a 24 h etcd lease`);
  });

  void it('names the Network route via flannel0 gone', async () => {
    n1.weftd?.kill('SIGSTOP');
    try {
      await nsRun(n1.netns, ['ip', 'route', 'del', '10.244.0.0/16', 'dev', 'flannel0']);
      const r = await doctor(c, n1);
      const peers = problemsOf(r, 'peers');
      assert.deepEqual(peers.map((p) => p.detail), ['no route for the Network 10.244.0.0/16 via flannel0']);
    } finally {
      await nsRun(n1.netns, ['ip', 'route', 'replace', '10.244.0.0/16', 'dev', 'flannel0']).catch(() => undefined);
      n1.weftd?.kill('SIGCONT');
    }
  });

  void it('names the node\'s lease missing from etcd', async () => {
    await c.stopWeftd(n1);
    await nsRun(c.etcd?.netns ?? '', ['env', 'ETCDCTL_API=3', 'etcdctl', '--endpoints', c.etcd?.url ?? '', 'del', `/coreos.com/network/subnets/${(n1.subnet as string).replace('/', '-')}`]);
    const r = await doctor(c, n1);
    const lease = problemsOf(r, 'lease');
    assert.ok(lease.some((p) => p.detail.startsWith(`no lease in ${c.etcd?.url ? `etcd:${c.etcd.url}` : ''} for this node's public IP ${n1.ip}`)), JSON.stringify(r.problems));
  });
});

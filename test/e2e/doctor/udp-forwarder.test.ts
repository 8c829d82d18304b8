// `weft doctor` on a udp node compares weftd's forwarder table (exported on /metrics) with the
// lease table: clean when healthy; with the forwarder held on an old table by the test-only knob
// WEFT_UDP_TEST_FREEZE_TABLE=1, a lease it has not taken and an entry whose lease is gone are named.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { Cluster, type ClusterNode } from '../../../testkit/cluster.ts';
import { assertClean, doctor, problemsOf, skipReason } from './helpers.ts';

const noEtcd = ['/usr/bin/etcd', '/usr/local/bin/etcd'].some((p) => existsSync(p)) ? false : 'etcd not installed';
const SUBNETS = '/coreos.com/network/subnets/';
/** Leases of nodes that do not exist: only the lease table and the forwarder see them. */
const GONE = { key: `${SUBNETS}10.244.250.0-24`, subnet: '10.244.250.0/24', ip: '192.0.2.98' };
const LATE = { key: `${SUBNETS}10.244.251.0-24`, subnet: '10.244.251.0/24', ip: '192.0.2.99' };

void describe('weft doctor: the udp forwarder table against the leases', { skip: skipReason() || noEtcd, timeout: 180_000 }, () => {
  let c: Cluster;
  let n1: ClusterNode;
  before(async () => {
    c = await Cluster.create({ backend: 'udp', store: 'etcd', netConfInEtcd: true, nodes: 2, podsPerNode: 1 });
    [n1] = c.nodes as [ClusterNode];
  });
  after(() => c?.destroy());

  it('reports clean, every udp lease in the forwarder (a typeless flanneld lease included)', async () => {
    await c.etcd?.put(GONE.key, JSON.stringify({ PublicIP: GONE.ip }));
    // weftd takes a lease event at once; the check reads the table weftd exports.
    for (let i = 0; i < 50 && !(await c.metrics(n1)).has(`weftd_udp_forwarder_entry{public_ip="${GONE.ip}",subnet="${GONE.subnet}"}`); i++) await new Promise((r) => setTimeout(r, 100));
    const r = await doctor(c, n1);
    assertClean(r);
    assert.equal(r.checks.find((x) => x.check === 'peers')?.facts['forwarderEntries'], 3);
  });

  it('names a lease the forwarder has not taken and a stale entry whose lease is gone', async () => {
    await c.stopWeftd(n1);
    process.env['WEFT_UDP_TEST_FREEZE_TABLE'] = '1';
    try {
      await c.startWeftd(n1);
    } finally {
      delete process.env['WEFT_UDP_TEST_FREEZE_TABLE'];
    }
    await c.etcd?.etcdctl(['del', GONE.key]);
    await c.etcd?.put(LATE.key, JSON.stringify({ PublicIP: LATE.ip, BackendType: 'udp' }));
    const r = await doctor(c, n1);
    assert.deepEqual(problemsOf(r, 'peers').map((p) => p.detail.split(' (')[0]), [
      `forwarder entry missing: ${LATE.subnet} should go to ${LATE.ip}`,
      `stale forwarder entry: ${GONE.subnet} -> ${GONE.ip} matches no lease`,
    ]);
    assert.match(problemsOf(r, 'peers')[0]?.fix ?? '', /systemctl restart weftd/);
    assert.equal(r.ok, false);
  });
});

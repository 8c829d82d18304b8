// Issue 27 item 9, must show: a 3-node cluster that runs the real flanneld everywhere (etcd, its CNI
// plugin in front of the reference bridge/host-local) switches node by node to weftd. weftd takes
// over flanneld's peer routes (proto boot, exactly what a lease programs) instead of leaving them
// as foreign, and on vxlan keeps flannel.1 and its MAC, so no peer reprograms and no ping is lost
// during the switch (counted at 20/s). Then node 3 departs (lease deleted) and node 2 rejoins with a
// new underlay address: every node withdraws node 3's subnet and follows node 2 to its new address.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Cluster, waitFor, type ClusterNode, type ClusterPod } from '../../../testkit/cluster.ts';
import { spawnInNetns } from '../../../testkit/netns.ts';
import { nsRun } from '../../../testkit/topology.ts';
import { assertProgrammedFor, FLANNEL_CNI, pingOnce, routesTo, skipReason, vtepLink } from './helpers.ts';

const FLANNELD = `${process.env['WEFT_CACHE_DIR'] ?? '/var/cache/weft'}/go-bin/flannel-v0.28.10/flannel`;
const PREFIX = '/coreos.com/network/subnets/';

function skip(): string | false {
  return skipReason({ etcd: true }) || (existsSync(FLANNELD) ? false : `${FLANNELD} missing: run scripts/flannel-setup.sh`) ||
    (existsSync(FLANNEL_CNI) ? false : `${FLANNEL_CNI} missing: run scripts/flannel-cni-setup.sh`);
}

/** A `ping -i 0.05` (20/s); stop() counts the echo requests in the run that got no reply. */
function pingCount(fromNetns: string, ip: string): { stop: () => Promise<{ sent: number; lost: number }> } {
  const p: ChildProcess = spawnInNetns(fromNetns, ['ping', '-n', '-i', '0.05', '-W', '1', ip], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  p.stdout?.on('data', (d: Buffer) => { out += d.toString(); });
  return {
    stop: async () => {
      const closed = new Promise((r) => p.once('close', r));
      p.kill('SIGINT');
      await closed;
      const seqs = new Set([...out.matchAll(/icmp_seq=(\d+)/g)].map((m) => Number(m[1])));
      const sent = Number(/(\d+) packets transmitted/.exec(out)?.[1] ?? '0');
      // The last second of requests may still be in flight when SIGINT arrives: count up to the last reply.
      const last = Math.max(0, ...seqs);
      return { sent, lost: last - seqs.size };
    },
  };
}

/** Ordered pod pairs that fail two pings in a row. */
async function unreachable(c: Cluster): Promise<string[]> {
  const bad: string[] = [];
  for (const a of c.pods) for (const b of c.pods) {
    if (a !== b && !(await pingOnce(a.netns, b.ip)) && !(await pingOnce(a.netns, b.ip))) bad.push(`${a.name}->${b.name}`);
  }
  return bad;
}

/** Routes of `n` to peers' subnets by protocol as `ip -d -j` prints it ("boot", "87"; without -d boot is left out). */
async function peerRouteProtocols(c: Cluster, n: ClusterNode): Promise<string[]> {
  const out: string[] = [];
  for (const p of c.nodes) {
    if (p === n || p.subnet === undefined) continue;
    const r = JSON.parse(await nsRun(n.netns, ['ip', '-d', '-j', 'route', 'show', 'exact', p.subnet])) as Array<{ protocol?: string }>;
    out.push(...r.map((x) => x.protocol ?? '?'));
  }
  return out;
}

for (const backend of ['host-gw', 'vxlan'] as const) {
  void describe(`flanneld -> weftd on ${backend}: weftd adopts what flanneld programmed`, { skip: skip(), timeout: 300_000 }, () => {
    let c: Cluster;
    before(async () => {
      c = await Cluster.create({
        backend, store: 'etcd', netConfInEtcd: true, nodes: 3, podsPerNode: 1,
        delegate: { ipMasq: false }, flanneld: { bin: FLANNELD, nodes: [1, 2, 3], cniBin: FLANNEL_CNI },
      });
    });
    after(() => c?.destroy());

    it('node by node to weftd: flanneld\'s routes taken over (said once), flannel.1 and its MAC kept, no ping lost', async (t) => {
      assert.deepEqual(await unreachable(c), []);
      for (const n of c.nodes) assert.deepEqual(await peerRouteProtocols(c, n), ['boot', 'boot'], `${n.netns}: flanneld's routes`);
      const pod = (n: ClusterNode): ClusterPod => c.pods.find((p) => p.node === n) as ClusterPod;
      for (const n of c.nodes) {
        const mac = (await vtepLink(n))?.address;
        const peer = c.nodes.find((x) => x !== n) as ClusterNode;
        const out = pingCount(pod(n).netns, pod(peer).ip);
        const back = pingCount(pod(peer).netns, pod(n).ip);
        await new Promise((r) => setTimeout(r, 500));
        await c.stopFlanneld(n);
        await c.startWeftd(n);
        await new Promise((r) => setTimeout(r, 1500));
        const [a, b] = [await out.stop(), await back.stop()];
        t.diagnostic(`${n.netns} -> weftd: ${a.lost}/${a.sent} pings lost out, ${b.lost}/${b.sent} back`);
        assert.ok(a.sent > 20 && b.sent > 20, 'pings ran');
        if (backend === 'vxlan') {
          assert.equal((await vtepLink(n))?.address, mac, `${n.netns}: flannel.1 keeps flanneld's MAC`);
          const lease = JSON.parse((await (c.etcd as NonNullable<Cluster['etcd']>).etcdctl(['get', '--print-value-only', `${PREFIX}${(n.subnet as string).replace('/', '-')}`])).trim()) as { BackendData?: { VtepMAC?: string } };
          assert.equal(lease.BackendData?.VtepMAC, mac, `${n.netns}: the lease still advertises it`);
          assert.match(c.weftdLog(n), /kept the existing VTEP and its MAC/);
        }
        assert.deepEqual([a.lost, b.lost], [0, 0], `${n.netns}: no ping lost during the switch`);
        assert.deepEqual(await peerRouteProtocols(c, n), ['87', '87'], `${n.netns}: routes now weftd's`);
        const log = c.weftdLog(n);
        assert.equal(log.split('\n').filter((l) => l.includes('took over peer routes flanneld programmed')).length, 1, `${n.netns}: said once`);
        assert.doesNotMatch(log, /route exists and is not ours/);
      }
      await new Promise((r) => setTimeout(r, 2500));
      for (const n of c.nodes) assert.equal(c.weftdLog(n).split('\n').filter((l) => l.includes('took over peer routes')).length, 1, `${n.netns}: still once after resyncs`);
      assert.deepEqual(await unreachable(c), []);
    });

    it('node 3 departs, node 2 rejoins with a new address: every node follows', async () => {
      const [n1, n2, n3] = c.nodes as [ClusterNode, ClusterNode, ClusterNode];
      const etcd = c.etcd as NonNullable<Cluster['etcd']>;
      const key = (n: ClusterNode): string => `${PREFIX}${(n.subnet as string).replace('/', '-')}`;
      await c.stopWeftd(n3);
      await etcd.etcdctl(['del', key(n3)]);
      for (const n of [n1, n2]) await waitFor(`${n.netns} withdraws ${n3.subnet}`, async () => (await routesTo(n, n3.subnet as string)).length === 0, 10_000, 100);
      c.pods.splice(c.pods.findIndex((p) => p.node === n3), 1);

      await c.stopWeftd(n2);
      await etcd.etcdctl(['del', key(n2)]);
      await waitFor(`${n1.netns} withdraws ${n2.subnet}`, async () => (await routesTo(n1, n2.subnet as string)).length === 0, 10_000, 100);
      const moved = '192.0.2.42';
      await nsRun(n2.netns, ['ip', 'addr', 'del', `${n2.ip}/24`, 'dev', 'eth0']);
      await nsRun(n2.netns, ['ip', 'addr', 'add', `${moved}/24`, 'dev', 'eth0']);
      const subnet = n2.subnet;
      n2.ip = moved;
      await c.startWeftd(n2);
      assert.equal(n2.subnet, subnet, 'node 2 keeps its subnet (subnet.env)');
      await waitFor(`${n1.netns} follows node 2 to ${moved}`, async () => {
        try { await assertProgrammedFor(n1, n2, backend); return true; } catch { return false; }
      }, 10_000, 100);
      await assertProgrammedFor(n2, n1, backend);
      assert.deepEqual(await unreachable(c), []);
      assert.deepEqual(await peerRouteProtocols(c, n1), ['87'], 'node 1: one route, weftd\'s');
    });
  });
}

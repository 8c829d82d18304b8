// weftd --ip-masq: traffic from the cluster Network to outside it leaves with the node's address;
// pod-to-pod traffic keeps the pod's address; one nftables table holds the rules.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster, type ClusterNode, type ClusterPod } from '../../../testkit/cluster.ts';
import { nsExec, nsRun } from '../../../testkit/topology.ts';
import { skipReason } from './helpers.ts';

const SERVER = "require('net').createServer((s)=>s.end(s.remoteAddress)).listen(9999,'0.0.0.0')";

/** Starts a TCP server in `netns` that answers with the peer address it sees. */
function echoPeer(c: Cluster, netns: string): void {
  c.topo.spawnIn(netns, ['node', '-e', SERVER]);
}

async function peerSeenBy(fromNetns: string, ip: string): Promise<string> {
  const client = `const s=require('net').connect(9999,'${ip}');let d='';s.on('data',(x)=>d+=x);s.on('end',()=>{process.stdout.write(d)});s.on('error',(e)=>{console.error(e.message);process.exit(1)})`;
  for (let i = 0; i < 40; i++) {
    const r = await nsExec(fromNetns, ['node', '-e', client], { timeoutMs: 5000 });
    if (r.code === 0 && r.stdout !== '') return r.stdout.replace(/^::ffff:/, '');
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`no answer from ${ip}:9999`);
}

void describe('weftd --ip-masq', { skip: skipReason(), timeout: 120_000 }, () => {
  let c: Cluster;
  before(async () => { c = await Cluster.create({ backend: 'vxlan', store: 'file', nodes: 2, podsPerNode: 1, ipMasq: true }); });
  after(() => c?.destroy());

  it('subnet.env says FLANNEL_IPMASQ=true, so the bridge does not masquerade; weftd holds one chain', async () => {
    const n1 = c.nodes[0] as ClusterNode;
    const rules = await nsRun(n1.netns, ['nft', 'list', 'ruleset']);
    assert.match(rules, /chain ipmasq-postrouting/);
    assert.doesNotMatch(rules, /bridge-masq/);
    assert.equal((rules.match(/^table /gm) ?? []).length, 1, rules);
  });

  it('pod -> outside the Network is masqueraded; pod -> pod on another node is not', async () => {
    const [n1, n2] = c.nodes as [ClusterNode, ClusterNode];
    const [p1, p2] = c.pods as [ClusterPod, ClusterPod];
    echoPeer(c, n2.netns);
    echoPeer(c, p2.netns);
    assert.equal(await peerSeenBy(p1.netns, n2.ip), n1.ip, 'to a node address (outside the Network): source is n1');
    assert.equal(await peerSeenBy(p1.netns, p2.ip), p1.ip, 'pod to pod: source kept');
  });
});

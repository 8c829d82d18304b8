// The built bandwidth chained after bridge + host-local through the libcni-style runner in a
// simulated node: iperf3 through a shaped pod lands within 10% of the configured rate each way,
// CHECK passes, unshapedSubnets lets a listed peer through at full speed, shapedSubnets shapes only the
// listed peer, DEL leaves no qdisc or ifb.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CniRunner, type ConfList } from '../../../testkit/cni-runner.ts';
import { Topology, type SimPod } from '../../../testkit/topology.ts';
import { isRoot } from '../../../testkit/netns.ts';
import { BIN_DIR, bandwidthConfList, iperf, nodeIfbs, nodeQdiscs, resultIp } from './helpers.ts';

const missing = ['bridge', 'host-local', 'bandwidth'].filter((b) => !existsSync(join(BIN_DIR, b)));
const hasIperf = existsSync('/usr/bin/iperf3');
const skip = !isRoot() ? 'needs root' : missing.length > 0 ? `dist/bin/{${missing.join(',')}} missing: run npm run build` : !hasIperf ? 'iperf3 missing (scripts/deps.sh)' : false;

const INGRESS = 20_000_000; // bit/s into the pod
const EGRESS = 10_000_000; // bit/s out of the pod
const within10 = (got: number, want: number) => Math.abs(got - want) / want <= 0.1;
const mbit = (b: number) => `${(b / 1e6).toFixed(2)} Mbit/s`;

describe('bandwidth chained after bridge (built binaries, iperf3)', { skip, timeout: 180_000 }, () => {
  let topo: Topology;
  let conf: ConfList;
  let chain: CniRunner;
  let plain: CniRunner;
  let shaped: SimPod;
  let peer: SimPod;
  let peerIp = '';
  const node = () => topo.nodes[0]?.netns ?? '';

  before(async () => {
    topo = await Topology.create({ nodes: 1 });
    const dataDir = mkdtempSync(join(topo.dir, 'ipam-'));
    conf = bandwidthConfList('bwnet', dataDir, '10.77.0.0/24');
    chain = new CniRunner(conf, { binDirs: [BIN_DIR], nodeNetns: node() });
    plain = new CniRunner({ ...conf, plugins: conf.plugins.filter((p) => p.type === 'bridge') }, { binDirs: [BIN_DIR], nodeNetns: node() });
    const n = topo.nodes[0];
    assert.ok(n);
    shaped = await topo.addPod(n, 1);
    peer = await topo.addPod(n, 2);
    peerIp = resultIp(await plain.add({ containerId: 'peer', netns: peer.path, ifName: 'eth0' }));
  });
  after(() => topo?.destroySync());

  it('shapes to within 10% of the configured rates each way (containerd-style capitalised keys), CHECK passes, DEL leaves nothing', async (t) => {
    // containerd's CRI sends the capability's Go struct without JSON tags: capitalised keys.
    const bandwidth = { IngressRate: INGRESS, IngressBurst: INGRESS / 10, EgressRate: EGRESS, EgressBurst: EGRESS / 10 };
    const a = { containerId: 'shaped', netns: shaped.path, ifName: 'eth0', runtimeConfig: { bandwidth } };
    const res = await chain.add(a);
    const ifaces = res['interfaces'] as Array<{ name: string; mac?: string; sandbox?: string }>;
    // The reference appends the ifb as a host interface; everything bridge returned is unchanged before it.
    assert.match(ifaces.at(-1)?.name ?? '', /^bwp[0-9a-f]{12}$/);
    assert.equal(ifaces.at(-1)?.sandbox, undefined);
    assert.deepEqual(await nodeIfbs(node()), [ifaces.at(-1)?.name]);
    await chain.check(a);

    const ip = resultIp(res);
    const out = await iperf(topo, peer.netns, shaped.netns, peerIp, { port: 5201 }); // pod -> peer: egress
    const into = await iperf(topo, peer.netns, shaped.netns, peerIp, { port: 5202, reverse: true }); // peer -> pod: ingress
    t.diagnostic(`egress ${mbit(out)} (configured ${mbit(EGRESS)}), ingress ${mbit(into)} (configured ${mbit(INGRESS)}), pod ${ip}`);
    assert.ok(within10(out, EGRESS), `egress ${mbit(out)} not within 10% of ${mbit(EGRESS)}`);
    assert.ok(within10(into, INGRESS), `ingress ${mbit(into)} not within 10% of ${mbit(INGRESS)}`);

    await chain.del(a);
    assert.deepEqual(await nodeQdiscs(node()), []);
    assert.deepEqual(await nodeIfbs(node()), []);
  });

  it('unshapedSubnets: a listed peer goes at full speed both ways, CHECK passes on the htb design, DEL leaves nothing', async (t) => {
    // Top-level keys: any one of them makes the plugin ignore runtimeConfig.bandwidth (the reference's rule).
    const c = bandwidthConfList('bwnet', '', '', { unshapedSubnets: [`${peerIp}/32`], ingressRate: INGRESS, ingressBurst: INGRESS / 10, egressRate: EGRESS, egressBurst: EGRESS / 10 });
    const unshaped = new CniRunner({ ...conf, plugins: [conf.plugins[0] ?? { type: 'bridge' }, c.plugins[1] ?? { type: 'bandwidth' }] }, { binDirs: [BIN_DIR], nodeNetns: node() });
    const a = { containerId: 'unshaped', netns: shaped.path, ifName: 'eth0', runtimeConfig: { bandwidth: { ingressRate: 1000, ingressBurst: 1000 } } };
    await unshaped.add(a);
    await unshaped.check(a);
    const kinds = (await nodeQdiscs(node())).map((q) => q.kind).sort();
    assert.deepEqual(kinds, ['htb', 'htb', 'ingress']);
    const out = await iperf(topo, peer.netns, shaped.netns, peerIp, { port: 5203, seconds: 2 });
    const into = await iperf(topo, peer.netns, shaped.netns, peerIp, { port: 5204, seconds: 2, reverse: true });
    t.diagnostic(`to/from an unshaped peer: egress ${mbit(out)}, ingress ${mbit(into)}`);
    assert.ok(out > 5 * EGRESS, `egress to an unshaped subnet limited: ${mbit(out)}`);
    assert.ok(into > 5 * INGRESS, `ingress from an unshaped subnet limited: ${mbit(into)}`);
    await unshaped.del(a);
    assert.deepEqual(await nodeQdiscs(node()), []);
    assert.deepEqual(await nodeIfbs(node()), []);
  });

  it('shapedSubnets: only the listed peer is shaped (within 10%), the node is not', async (t) => {
    const c = bandwidthConfList('bwnet', '', '', { shapedSubnets: [`${peerIp}/32`], egressRate: EGRESS, egressBurst: EGRESS / 10 });
    const listed = new CniRunner({ ...conf, plugins: [conf.plugins[0] ?? { type: 'bridge' }, c.plugins[1] ?? { type: 'bandwidth' }] }, { binDirs: [BIN_DIR], nodeNetns: node() });
    const a = { containerId: 'listed', netns: shaped.path, ifName: 'eth0' };
    await listed.add(a);
    await listed.check(a);
    const toPeer = await iperf(topo, peer.netns, shaped.netns, peerIp, { port: 5205 });
    const toNode = await iperf(topo, node(), shaped.netns, '10.77.0.1', { port: 5206, seconds: 2 });
    t.diagnostic(`egress to the listed peer ${mbit(toPeer)} (configured ${mbit(EGRESS)}), to the unlisted node ${mbit(toNode)}`);
    assert.ok(within10(toPeer, EGRESS), `egress to a shaped subnet ${mbit(toPeer)} not within 10% of ${mbit(EGRESS)}`);
    assert.ok(toNode > 5 * EGRESS, `egress outside shapedSubnets limited: ${mbit(toNode)}`);
    await listed.del(a);
    assert.deepEqual(await nodeQdiscs(node()), []);
    assert.deepEqual(await nodeIfbs(node()), []);
  });
});


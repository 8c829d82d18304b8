// The doctor's pure checks over a fixture node: clean when healthy, and each break named once with
// its repair (peers via the reconcile's desired state and diff, cni0's address, MTU chain, leaks).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkAllocations } from '../../../../cli/doctor/check-allocations.ts';
import { checkBridge } from '../../../../cli/doctor/check-bridge.ts';
import { checkMtu } from '../../../../cli/doctor/check-mtu.ts';
import { checkNft, commentAttachment } from '../../../../cli/doctor/check-nft.ts';
import { checkPeers } from '../../../../cli/doctor/check-peers.ts';
import type { Allocation } from '../../../../cli/doctor/allocations.ts';
import { liveAttachments } from '../../../../lib/attach/bridge-veth.ts';
import { parseSubnetEnv } from '../../../../lib/flannel/subnet-env.ts';
import type { NftTableState } from '../../../../lib/netfilter/index.ts';
import { NET_CONF, OWN, PEER, UPLINK, healthyNode, link, route } from './fixtures.ts';

const ENV = parseSubnetEnv('FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=false\n');
const alloc = (ip: string, containerId: string): Allocation => ({ network: 'weft', ip, containerId, ifName: 'eth0', path: `/d/weft/${ip}` });

describe('checkPeers', () => {
  test('a fully programmed node is clean', () => {
    const r = checkPeers({ netConf: NET_CONF, leases: [OWN, PEER], own: OWN, uplink: UPLINK, node: healthyNode() });
    assert.deepEqual(r.problems, []);
    assert.equal(r.facts['inPlace'], 3);
  });
  test('a missing route, a drifted neighbour and a stale FDB entry are named with their repairs', () => {
    const node = healthyNode();
    node.routes = node.routes.filter((x) => x.dst !== '10.244.2.0/24');
    node.neighs = [{ ...node.neighs[0]!, mac: '0a:00:00:00:00:99' }];
    node.fdbs.push({ ...node.fdbs[0]!, mac: '0a:00:00:00:00:77', dst: '192.0.2.77' });
    const r = checkPeers({ netConf: NET_CONF, leases: [OWN, PEER], own: OWN, uplink: UPLINK, node });
    assert.deepEqual(r.problems.map((p) => p.detail), [
      'stale FDB entry: 0a:00:00:00:00:77 dst 192.0.2.77 on flannel.1 matches no lease (traffic to that MAC goes to a node that is gone)',
      'neighbour drifted: 10.244.2.0 should be 0a:00:00:00:00:12 (permanent) on flannel.1',
      'route missing: 10.244.2.0/24 should go via 10.244.2.0 dev flannel.1 onlink',
    ]);
    assert.equal(r.problems[0]?.fix, 'bridge fdb del 0a:00:00:00:00:77 dev flannel.1 dst 192.0.2.77 self');
  });
  test('a foreign route to a peer subnet and a lease of another backend are named', () => {
    const node = healthyNode();
    node.routes = [route('10.244.2.0/24', '192.0.2.99', 2, 4), ...node.routes.filter((x) => x.dst !== '10.244.2.0/24')];
    const gw: typeof PEER = { ...PEER, subnet: '10.244.3.0/24', publicIp: '192.0.2.13', backendType: 'host-gw', backendData: {} };
    const r = checkPeers({ netConf: NET_CONF, leases: [OWN, PEER, gw], own: OWN, uplink: UPLINK, node });
    assert.ok(r.problems.some((p) => p.detail.startsWith('a route to peer subnet 10.244.2.0/24 exists that weft did not create (proto 4)')));
    assert.ok(r.problems.some((p) => p.detail === 'lease 10.244.3.0/24 cannot be programmed: backend host-gw, not vxlan'));
  });
  test('a missing VTEP is one problem', () => {
    const node = healthyNode();
    node.links = node.links.filter((l) => l.name !== 'flannel.1');
    const r = checkPeers({ netConf: NET_CONF, leases: [OWN, PEER], own: OWN, uplink: UPLINK, node });
    assert.deepEqual(r.problems.map((p) => p.detail), ['the VTEP flannel.1 does not exist: no traffic reaches other nodes']);
  });
});

describe('checkBridge', () => {
  const live = liveAttachments(healthyNode().links);
  test('the current gateway on cni0 is clean; no cni0 is skipped', () => {
    assert.deepEqual(checkBridge({ bridge: 'cni0', subnet: '10.244.1.0/24', node: healthyNode(), allocs: [], live }).problems, []);
    const node = healthyNode();
    node.links = node.links.filter((l) => l.name !== 'cni0');
    assert.match(checkBridge({ bridge: 'cni0', subnet: '10.244.1.0/24', node, allocs: [], live }).skipped ?? '', /does not exist/);
  });
  test('an old gateway names the pods still on it, and the repair', () => {
    const r = checkBridge({ bridge: 'cni0', subnet: '10.244.7.0/24', node: healthyNode(), allocs: [alloc('10.244.1.5', 'c1'), alloc('10.244.1.6', 'gone')], live });
    assert.equal(r.problems.length, 1);
    assert.equal(r.problems[0]?.detail, 'cni0 has 10.244.1.1/24, but the node\'s subnet is 10.244.7.0/24 (gateway 10.244.7.1/24): pod ADDs fail with "cni0 already has an IP address different from 10.244.7.1/24"; 1 pod(s) still on 10.244.1.0/24: c1/eth0=10.244.1.5; 1 leaked address file(s) on 10.244.1.0/24: gone/eth0=10.244.1.6');
    assert.equal(r.problems[0]?.fix, 'delete or restart the pods still on 10.244.1.0/24 (they cannot reach the cluster) and run CNI GC; the next pod ADD then moves cni0 to 10.244.7.1/24 by itself (weft\'s bridge), or now: ip addr del 10.244.1.1/24 dev cni0');
  });
  test('without pods on the old subnet the fix is the address removal alone', () => {
    const r = checkBridge({ bridge: 'cni0', subnet: '10.244.7.0/24', node: healthyNode(), allocs: [], live });
    assert.equal(r.problems[0]?.fix, 'cni0 moves to 10.244.7.1/24 on the next pod ADD by itself (weft\'s bridge); with another bridge plugin, or now: ip addr del 10.244.1.1/24 dev cni0');
  });
});

describe('checkMtu', () => {
  test('a consistent chain is clean; each break is named once', () => {
    assert.deepEqual(checkMtu({ netConf: NET_CONF, uplink: UPLINK, env: ENV, bridge: 'cni0', node: healthyNode() }).problems, []);
    const node = healthyNode();
    node.links = node.links.map((l) => (l.name === 'cni0' ? { ...l, mtu: 1500 } : l.kind === 'veth' ? { ...l, mtu: 1400 } : l));
    const r = checkMtu({ netConf: NET_CONF, uplink: UPLINK, env: { ...ENV, mtu: 1500 }, bridge: 'cni0', node });
    assert.deepEqual(r.problems.map((p) => p.detail), [
      'subnet.env FLANNEL_MTU=1500, but the backend gives pods 1450: new pods get the wrong MTU',
      'cni0 has MTU 1500, above the pods\' 1450',
      'pod veth w1234560a1b2c3d (c1/eth0) on cni0 has MTU 1400, pods on this node use 1450',
    ]);
  });
  test('Backend.MTU overrides the uplink rule; host-gw pods use the uplink MTU', () => {
    const conf = { ...NET_CONF, backend: { ...NET_CONF.backend, mtu: 1400 } };
    const r = checkMtu({ netConf: conf, uplink: UPLINK, env: ENV, bridge: 'cni0', node: healthyNode() });
    assert.ok(r.problems.some((p) => p.detail.startsWith('flannel.1 has MTU 1450, expected 1400')));
    const hg = { ...NET_CONF, backend: { ...NET_CONF.backend, type: 'host-gw' as const } };
    const node = healthyNode();
    node.links = node.links.map((l) => ({ ...l, mtu: 1500 }));
    assert.deepEqual(checkMtu({ netConf: hg, uplink: UPLINK, env: { ...ENV, mtu: 1500 }, bridge: 'cni0', node }).problems, []);
  });
});

describe('allocations and nft elements against live attachments', () => {
  const live = liveAttachments([link(5, 'w1234560a1b2c3d', 1450, { alias: 'weft:c1/eth0' })]);
  test('an address without an interface is leaked, with CNI GC as the fix', () => {
    const r = checkAllocations('/d', [alloc('10.244.1.5', 'c1'), alloc('10.244.1.9', 'ghost')], live);
    assert.equal(r.problems.length, 1);
    assert.match(r.problems[0]?.detail ?? '', /^address 10\.244\.1\.9 \(network weft\) is held by ghost\/eth0/);
    assert.match(r.problems[0]?.fix ?? '', /CNI GC for network weft.*rm \/d\/weft\/10\.244\.1\.9/);
  });
  test('element comments: plain and portmap-tagged name an attachment; hashed ones do not', () => {
    assert.deepEqual(commentAttachment('c1/eth0'), { containerId: 'c1', ifName: 'eth0' });
    assert.deepEqual(commentAttachment('0badf00d:c1/eth0'), { containerId: 'c1', ifName: 'eth0' });
    assert.equal(commentAttachment('h:0badf00d'), null);
    assert.equal(commentAttachment('0badf00d:h:12345678'), null);
  });
  test('an element of a gone attachment is named; held or live ones are not', () => {
    const table: NftTableState = { family: 'inet', name: 'weft', handle: 1, chains: new Map(), sets: new Map([['pods', {
      name: 'pods', kind: 'set', handle: 2, type: ['ipv4_addr'], flags: [],
      elements: [{ key: ['10.244.1.5'], comment: 'c1/eth0' }, { key: ['10.244.1.6'], comment: 'c2/eth0' }, { key: ['10.244.1.7'], comment: 'ghost/eth0' }, { key: ['10.244.1.8'] }],
    }]]) };
    const r = checkNft(table, 'inet weft', [alloc('10.244.1.6', 'c2')], live);
    assert.deepEqual(r.problems.map((p) => p.detail), ['set inet weft pods has element 10.244.1.7 for ghost/eth0, which has no address and no interface on this node']);
    assert.equal(r.facts['elements'], 4);
  });
});

// portmap against the kernel: a pod behind a bridge in a node namespace the test creates; hostPort
// reached from a client, from the node (its address and 127.0.0.1), from the pod itself; UDP; DEL.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CniError } from '../../../../lib/cni/errors.ts';
import { listTable, WEFT_TABLE } from '../../../../lib/netfilter/index.ts';
import type { NftTableState } from '../../../../lib/netfilter/index.ts';
import { cmdAdd } from '../../../../plugins/portmap/add.ts';
import { cmdCheck } from '../../../../plugins/portmap/check.ts';
import { cmdDel } from '../../../../plugins/portmap/del.ts';
import { cmdGc } from '../../../../plugins/portmap/gc.ts';
import { findRouteIface, hostIfaceOf } from '../../../../plugins/portmap/localnet.ts';
import { ELEMENT_SETS, elementComment } from '../../../../plugins/portmap/names.ts';
import { rootOnly, run, inNetns } from '../../../../testkit/netns.ts';
import { BRIDGE4, CLIENT4, NODE4, NODE6, PortmapLab, cmdArgs, fetchFrom, fetchRaw, udpAsk, type Pod } from './fixture.ts';

const HTTP = { hostPort: 8080, containerPort: 80, protocol: 'tcp' };
const DNS = { hostPort: 5353, containerPort: 53, protocol: 'udp' };

function elementsOf(state: NftTableState | null, comment: string): unknown[] {
  return ELEMENT_SETS.flatMap((s) => (state?.sets.get(s)?.elements ?? []).filter((e) => e.comment === comment));
}

function call<T>(lab: PortmapLab, fn: () => T): T {
  return lab.inNode(fn);
}

async function udpFlows(lab: PortmapLab, port: number): Promise<string> {
  const r = await run(inNetns(lab.node.name, ['conntrack', '-L', '-p', 'udp', '--orig-port-dst', String(port)]));
  return r.stdout.trim();
}

for (const brNetfilter of [true, false]) describe(`portmap in a node namespace (br_netfilter ${brNetfilter ? 'on' : 'off'})`, rootOnly(), () => {
  let lab: PortmapLab;
  let pod1: Pod;
  let pod2: Pod;
  const table = () => listTable(WEFT_TABLE, { netnsPath: lab.node.path });
  const add = (pod: Pod, portMappings: unknown[]) => call(lab, () => cmdAdd(cmdArgs('ADD', pod, { portMappings, prevResult: pod.result })));

  before(async () => {
    lab = await PortmapLab.create({ brNetfilter });
    pod1 = await lab.addPod(1);
    pod2 = await lab.addPod(2);
    lab.serveHttp(pod1.ns.name, 'pod-1');
    lab.serveHttp(pod2.ns.name, 'pod-2');
    lab.serveHttp(lab.client.name, 'client', 8080);
    lab.serveUdp(pod1);
    lab.serveWhoami(pod2);
    await new Promise((r) => setTimeout(r, 400));
  });
  after(async () => {
    await lab.destroy();
  });

  it('without mappings nothing answers on the hostPort', async () => {
    assert.equal(await fetchFrom(lab.client.name, NODE4, 8080), '');
    assert.equal(await fetchFrom(lab.client.name, pod1.ip4, 80, 'pod-1'), 'pod-1', 'the pod itself is reachable (routing works)');
  });

  it('empty portMappings: prevResult passes through and nothing is touched', () => {
    const res = add(pod1, []);
    assert.deepEqual(res, pod1.result);
    assert.equal(table(), null, 'not even the table was created');
  });

  it('ADD returns prevResult unchanged and adds one element per mapping and family', () => {
    const res = add(pod1, [HTTP, DNS]);
    assert.deepEqual(res, pod1.result);
    const mine = elementsOf(table(), elementComment('pmnet', pod1.containerId, 'eth0'));
    // 2 DNAT (v4, v6) x 2 mappings + snat: 2 hairpin v4 + 2 localhost v4 + 2 hairpin v6
    assert.equal(mine.length, 10, JSON.stringify(mine));
  });

  it('reachable from another namespace via the node address (IPv4 and IPv6)', async () => {
    assert.equal(await fetchFrom(lab.client.name, NODE4, 8080, 'pod-1'), 'pod-1');
    assert.equal(await fetchFrom(lab.client.name, NODE6, 8080, 'pod-1'), 'pod-1');
  });

  it('reachable from the node itself via its address and 127.0.0.1', async () => {
    assert.equal(await fetchFrom(lab.node.name, NODE4, 8080, 'pod-1'), 'pod-1');
    assert.equal(await fetchFrom(lab.node.name, NODE6, 8080, 'pod-1'), 'pod-1');
    assert.equal(await fetchFrom(lab.node.name, '127.0.0.1', 8080, 'pod-1'), 'pod-1');
    const localnet = await run(inNetns(lab.node.name, ['cat', '/proc/sys/net/ipv4/conf/br0/route_localnet']));
    assert.equal(localnet.stdout.trim(), '1', 'route_localnet set on the interface towards the pod');
  });

  it('the interface towards the pod: the result\'s host interface, else the route to the pod', () => {
    assert.equal(call(lab, () => hostIfaceOf(pod1.result)), 'br0');
    assert.equal(call(lab, () => hostIfaceOf({ interfaces: [{ name: 'nosuchif0', mac: '' }, { name: 'eth0', mac: '', sandbox: '/x' }] })), undefined);
    assert.equal(call(lab, () => findRouteIface(pod1.ip4)), 'br0');
    assert.equal(call(lab, () => findRouteIface('203.0.113.9')), undefined, 'no default route in the node namespace');
  });

  it('reachable from the pod itself via its hostPort (hairpin) and from another pod', async () => {
    assert.equal(await fetchFrom(pod1.ns.name, NODE4, 8080, 'pod-1'), 'pod-1');
    assert.equal(await fetchFrom(pod1.ns.name, BRIDGE4, 8080, 'pod-1'), 'pod-1');
    assert.equal(await fetchFrom(pod1.ns.name, NODE6, 8080, 'pod-1'), 'pod-1');
    assert.equal(await fetchFrom(pod2.ns.name, NODE4, 8080, 'pod-1'), 'pod-1');
  });

  it('traffic through the node to another host on the same port is not DNATed', async () => {
    assert.equal(await fetchFrom(pod2.ns.name, CLIENT4, 8080, 'client'), 'client');
  });

  it('the UDP mapping answers (IPv4 and IPv6)', async () => {
    assert.equal(await udpAsk(lab.client.name, NODE4, 5353), 'pod-1:hi');
    assert.equal(await udpAsk(lab.client.name, NODE6, 5353), 'pod-1:hi');
  });

  it('a hostPort taken by another container: code 120 naming the owner, nothing changed', async () => {
    const before = JSON.stringify([...(table()?.sets.values() ?? [])]);
    assert.throws(
      () => add(pod2, [{ hostPort: 9090, containerPort: 80, protocol: 'tcp' }, HTTP]),
      (e: unknown) => e instanceof CniError && e.code === 120 && e.details.includes('8080') && e.details.includes(pod1.containerId),
    );
    assert.equal(JSON.stringify([...(table()?.sets.values() ?? [])]), before);
    assert.equal(await fetchFrom(lab.client.name, NODE4, 9090), '', 'the non-conflicting mapping was not added either');
    assert.equal(await fetchFrom(lab.client.name, NODE4, 8080, 'pod-1'), 'pod-1');
  });

  it('a repeated ADD is idempotent; CHECK passes, and fails (121) when an entry is gone', async () => {
    add(pod1, [HTTP, DNS]);
    const check = () => call(lab, () => cmdCheck(cmdArgs('CHECK', pod1, { portMappings: [HTTP, DNS], prevResult: pod1.result })));
    check();
    const del = await run(inNetns(lab.node.name, ['nft', 'delete', 'element', 'inet', 'weft', 'portmap-dnat4', '{ tcp . 8080 }']));
    assert.equal(del.code, 0, del.stderr);
    assert.throws(check, (e: unknown) => e instanceof CniError && e.code === 121 && e.details.includes('portmap-dnat4'));
    add(pod1, [HTTP, DNS]);
    check();
  });

  it("a re-ADD after the pod's address changed replaces its own entries instead of reporting a conflict", async () => {
    const moved = { ...pod1.result, ips: (pod1.result.ips ?? []).map((ip) => ({ ...ip, address: ip.address.includes(':') ? `${pod2.ip6}/64` : `${pod2.ip4}/24` })) };
    const m = [{ hostPort: 6060, containerPort: 80, protocol: 'tcp' }];
    add(pod1, m);
    assert.equal(await fetchFrom(lab.client.name, NODE4, 6060, 'pod-1'), 'pod-1');
    call(lab, () => cmdAdd(cmdArgs('ADD', pod1, { portMappings: m, prevResult: moved })));
    assert.equal(await fetchFrom(lab.client.name, NODE4, 6060, 'pod-2'), 'pod-2');
    add(pod1, m); // back, for the tests below
    assert.equal(await fetchFrom(lab.client.name, NODE4, 6060, 'pod-1'), 'pod-1');
  });

  it('a second pod gets its own hostPort beside the first', async () => {
    add(pod2, [{ hostPort: 9090, containerPort: 80, protocol: 'tcp' }]);
    assert.equal(await fetchFrom(lab.client.name, NODE4, 9090, 'pod-2'), 'pod-2');
  });

  it('DEL without netns and without prevResult removes exactly this pod and flushes its UDP flows', async () => {
    assert.equal(await udpAsk(lab.client.name, NODE4, 5353, { srcPort: 40000 }), 'pod-1:hi');
    assert.match(await udpFlows(lab, 5353), /dport=5353/, 'a UDP flow to the hostPort exists');
    const a = cmdArgs('DEL', pod1, { netns: '' });
    call(lab, () => cmdDel(a));
    const t = table();
    assert.deepEqual(elementsOf(t, elementComment('pmnet', pod1.containerId, 'eth0')), []);
    assert.equal(elementsOf(t, elementComment('pmnet', pod2.containerId, 'eth0')).length > 0, true, "pod2's entries stay");
    assert.equal(await udpFlows(lab, 5353), '', 'the UDP flow was flushed');
    for (const [ns, host] of [[lab.client.name, NODE4], [lab.client.name, NODE6], [lab.node.name, NODE4], [lab.node.name, '127.0.0.1'], [pod1.ns.name, NODE4]] as const) {
      assert.equal(await fetchFrom(ns, host, 8080), '', `${ns} -> ${host}:8080 no longer answers`);
    }
    assert.equal(await udpAsk(lab.client.name, NODE4, 5353, { srcPort: 40000 }), '');
    assert.equal(await fetchFrom(lab.client.name, NODE4, 9090, 'pod-2'), 'pod-2');
    call(lab, () => cmdDel(a)); // a second DEL succeeds
  });

  it('GC removes the elements of attachments no longer valid, only of its own network', () => {
    add(pod1, [HTTP]);
    add(pod2, [{ hostPort: 9090, containerPort: 80 }]);
    call(lab, () => cmdAdd(cmdArgs('ADD', pod1, { portMappings: [{ hostPort: 7070, containerPort: 80 }], prevResult: pod1.result, conf: { name: 'othernet' } })));
    assert.throws(() => call(lab, () => cmdGc(cmdArgs('GC', pod1, { netns: '', conf: { cniVersion: '1.1.0' } }))), (e: unknown) => e instanceof CniError && e.code === 7);
    const valid = [{ containerID: pod2.containerId, ifname: 'eth0' }];
    call(lab, () => cmdGc(cmdArgs('GC', pod1, { netns: '', conf: { cniVersion: '1.1.0', 'cni.dev/valid-attachments': valid } })));
    const t = table();
    assert.deepEqual(elementsOf(t, elementComment('pmnet', pod1.containerId, 'eth0')), []);
    assert.ok(elementsOf(t, elementComment('pmnet', pod2.containerId, 'eth0')).length > 0);
    assert.ok(elementsOf(t, elementComment('othernet', pod1.containerId, 'eth0')).length > 0, 'another network is left alone');
    call(lab, () => cmdDel(cmdArgs('DEL', pod1, { netns: '', conf: { name: 'othernet' } })));
  });

  it('clients keep their own address by default; masqAll hides it behind the node', async () => {
    const who = { hostPort: 8181, containerPort: 81, protocol: 'tcp' };
    add(pod2, [who]);
    assert.equal(await fetchRaw(lab.client.name, NODE4, 8181), CLIENT4);
    call(lab, () => cmdDel(cmdArgs('DEL', pod2, { netns: '' })));
    call(lab, () => cmdAdd(cmdArgs('ADD', pod2, { portMappings: [who], prevResult: pod2.result, conf: { masqAll: true } })));
    assert.equal(await fetchRaw(lab.client.name, NODE4, 8181), BRIDGE4);
    call(lab, () => cmdDel(cmdArgs('DEL', pod2, { netns: '' })));
    assert.equal(await fetchRaw(lab.client.name, NODE4, 8181), '');
  });

  it('after DEL of every pod nothing of them is left in the ruleset', async () => {
    call(lab, () => cmdDel(cmdArgs('DEL', pod2, { portMappings: [{ hostPort: 9090, containerPort: 80 }], prevResult: pod2.result })));
    const t = table();
    for (const s of ELEMENT_SETS) assert.deepEqual(t?.sets.get(s)?.elements ?? [], [], `${s} is empty`);
    const text = (await run(inNetns(lab.node.name, ['nft', 'list', 'table', 'inet', 'weft']))).stdout;
    assert.doesNotMatch(text, /10\.99\.0\.1[12]|fd00:99::/);
    assert.equal(await fetchFrom(lab.client.name, NODE4, 9090), '');
  });
});

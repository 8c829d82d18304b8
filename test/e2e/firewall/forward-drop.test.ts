// The built firewall after the built bridge in a simulated node whose forward policy drops: pod
// traffic passes only while firewall is chained, with iptables-nft's `filter FORWARD` policy DROP and
// with a native nft `inet filter forward` policy drop; prevResult passes through; CHECK, DEL, GC.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CniRunner, type ConfList } from '../../../testkit/cni-runner.ts';
import { canPing } from '../../../testkit/probe.ts';
import { Topology, nsExec, nsRun, type SimPod } from '../../../testkit/topology.ts';
import { isRoot } from '../../../testkit/netns.ts';
import { fwNetworkNames } from '../../../plugins/firewall/names.ts';
import { BIN_DIR, runFirewall } from './helpers.ts';

const REFERENCE = '/usr/lib/cni/firewall';

const missing = ['bridge', 'host-local', 'firewall'].filter((b) => !existsSync(join(BIN_DIR, b)));
const skip = !isRoot() ? 'needs root' : missing.length > 0 ? `dist/bin/{${missing.join(',')}} missing: run npm run build` : false;

describe('firewall on a node whose forward policy drops (built binaries)', { skip, timeout: 120_000 }, () => {
  let topo: Topology;
  let client: { netns: string; ip: string };
  let bridgeOnly: CniRunner;
  let pod: SimPod;
  let prev: Record<string, unknown>;
  const node = () => topo.nodes[0]?.netns ?? '';
  const fw = (command: 'ADD' | 'DEL' | 'CHECK' | 'GC', extra?: Record<string, unknown>) =>
    runFirewall(node(), { command, name: 'fwnet', containerId: 'ctr-fw', netns: pod.path, prevResult: prev, ...(extra === undefined ? {} : { extra }) });

  before(async () => {
    topo = await Topology.create({ nodes: 1, prefix: 'wfwd' });
    client = await topo.addUnderlayHost('cl', '192.0.2.200');
    const dataDir = mkdtempSync(join(topo.dir, 'ipam-'));
    const conf: ConfList = {
      cniVersion: '1.0.0',
      name: 'fwnet',
      plugins: [{ type: 'bridge', bridge: 'fwbr0', isGateway: true, isDefaultGateway: true, ipMasq: true, ipam: { type: 'host-local', ranges: [[{ subnet: '10.89.1.0/24' }]], dataDir } }],
    };
    bridgeOnly = new CniRunner(conf, { binDirs: [BIN_DIR], nodeNetns: node() });
    const n = topo.nodes[0];
    assert.ok(n);
    pod = await topo.addPod(n, 1);
    await nsRun(node(), ['iptables', '-P', 'FORWARD', 'DROP']);
    prev = await bridgeOnly.add({ containerId: 'ctr-fw', netns: pod.path, ifName: 'eth0' });
  });
  after(() => topo?.destroySync());

  it('iptables-nft FORWARD DROP: blocked without firewall, open with it, blocked again after its DEL', async () => {
    assert.equal(await canPing(pod.netns, client.ip), false, 'FORWARD DROP must block the pod before firewall runs');
    const add = await fw('ADD');
    assert.equal(add.code, 0, add.stdout + add.stderr);
    assert.deepEqual(add.json, prev, 'prevResult passes through unchanged');
    assert.equal(await canPing(pod.netns, client.ip), true, 'firewall lets the pod out and the replies in');
    const check = await fw('CHECK');
    assert.equal(check.code, 0, check.stdout);
    const rules = await nsRun(node(), ['iptables', '-S', 'FORWARD']);
    assert.match(rules, /-m mark --mark 0x100000\/0x100000 .*weft-firewall.* -j ACCEPT/, 'iptables-nft reads the inserted rule');
    const del = await fw('DEL');
    assert.equal(del.code, 0, del.stdout);
    assert.equal(await canPing(pod.netns, client.ip), false, 'after firewall DEL the drop policy applies again');
    const check2 = await fw('CHECK');
    assert.equal(check2.code, 1);
    assert.equal(check2.json?.['code'], 130, check2.stdout);
    assert.equal((await fw('DEL')).code, 0, 'a second DEL succeeds');
  });

  it('a native nft forward chain with policy drop, created after the first ADD, is hooked by the next ADD', async () => {
    await nsRun(node(), ['iptables', '-P', 'FORWARD', 'ACCEPT']);
    await nsRun(node(), ['nft', 'add table inet hostfw; add chain inet hostfw hostforward { type filter hook forward priority 0; policy drop; }']);
    assert.equal(await canPing(pod.netns, client.ip), false);
    assert.equal((await fw('ADD')).code, 0);
    assert.equal(await canPing(pod.netns, client.ip), true);
    assert.equal((await fw('DEL')).code, 0);
    assert.equal(await canPing(pod.netns, client.ip), false);
  });

  it('GC removes elements of attachments not listed and keeps listed ones', async () => {
    assert.equal((await fw('ADD')).code, 0);
    const keep = await fw('GC', { cniVersion: '1.1.0', 'cni.dev/valid-attachments': [{ containerID: 'ctr-fw', ifname: 'eth0' }] });
    assert.equal(keep.code, 0, keep.stdout);
    assert.equal(await canPing(pod.netns, client.ip), true);
    const drop = await fw('GC', { cniVersion: '1.1.0', 'cni.dev/valid-attachments': [] });
    assert.equal(drop.code, 0, drop.stdout);
    assert.equal(await canPing(pod.netns, client.ip), false);
  });

  it('a refused ADD (same-bridge without a bridge in prevResult: code 131) adds no element', async () => {
    const list = async () => (await nsExec(node(), ['nft', 'list', 'set', 'inet', 'weft', fwNetworkNames('fwnet').pods4])).stdout;
    const before = await list();
    const noIfaces = { ...prev, interfaces: [], ips: (prev['ips'] as Array<Record<string, unknown>>).map(({ interface: _i, ...ip }) => ip) };
    const r = await runFirewall(node(), { command: 'ADD', name: 'fwnet', containerId: 'ctr-x', netns: pod.path, prevResult: noIfaces, extra: { ingressPolicy: 'same-bridge' } });
    assert.equal(r.code, 1);
    assert.equal(r.json?.['code'], 131, r.stdout);
    assert.equal(await list(), before);
    const noPrev = await runFirewall(node(), { command: 'ADD', name: 'fwnet', containerId: 'ctr-x', netns: pod.path });
    assert.equal(noPrev.json?.['code'], 7, noPrev.stdout);
  });

  it('DEL without prevResult and without netns still removes the elements', async () => {
    assert.equal((await fw('ADD')).code, 0);
    assert.equal(await canPing(pod.netns, client.ip), true);
    const del = await runFirewall(node(), { command: 'DEL', name: 'fwnet', containerId: 'ctr-fw', netns: '' });
    assert.equal(del.code, 0, del.stdout);
    assert.equal(await canPing(pod.netns, client.ip), false);
    const r = await nsExec(node(), ['nft', 'list', 'set', 'inet', 'weft', fwNetworkNames('fwnet').pods4]);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /elements/, 'no pod address left in the firewall set');
  });

  it('side by side: the reference (Go, iptables) opens iptables-nft FORWARD DROP but not a native nft drop chain; weft opens both', { skip: existsSync(REFERENCE) ? false : `${REFERENCE} missing` }, async () => {
    // The reference supports cniVersion 0.4.0 and later: hand it prevResult in that form.
    const prev04 = { ...prev, cniVersion: '0.4.0', ips: (prev['ips'] as Array<Record<string, unknown>>).map((ip) => ({ ...ip, version: '4' })) };
    const ref = (command: 'ADD' | 'DEL') => runFirewall(node(), { command, name: 'fwnet', containerId: 'ctr-fw', netns: pod.path, prevResult: prev04, extra: { cniVersion: '0.4.0' }, bin: REFERENCE });
    // State here: iptables FORWARD ACCEPT, `inet hostfw hostforward` policy drop (from an earlier test).
    assert.equal(await canPing(pod.netns, client.ip), false);
    const add = await ref('ADD');
    assert.equal(add.code, 0, add.stdout + add.stderr);
    assert.equal(await canPing(pod.netns, client.ip), false, 'an accept in iptables-nft cannot override a native drop');
    assert.equal((await fw('ADD')).code, 0);
    assert.equal(await canPing(pod.netns, client.ip), true, 'weft hooks the native chain');
    assert.equal((await fw('DEL')).code, 0);
    // Control: with only iptables-nft dropping, the reference does open the node.
    await nsRun(node(), ['nft', 'delete table inet hostfw']);
    await nsRun(node(), ['iptables', '-P', 'FORWARD', 'DROP']);
    assert.equal(await canPing(pod.netns, client.ip), true, 'reference rules still in place');
    assert.equal((await ref('DEL')).code, 0);
    assert.equal(await canPing(pod.netns, client.ip), false);
  });

  it('iptablesAdminChainName: a drop an admin puts in that chain blocks the pod despite firewall; removing it reopens', async () => {
    // Same network as the earlier tests: its chain jumped to CNI-ADMIN, the changed name takes over.
    const admin = (command: 'ADD' | 'DEL' | 'CHECK') => runFirewall(node(), { command, name: 'fwnet', containerId: 'ctr-adm', netns: pod.path, prevResult: prev, extra: { iptablesAdminChainName: 'MY-ADMIN' } });
    await nsRun(node(), ['iptables', '-P', 'FORWARD', 'DROP']);
    assert.equal((await admin('ADD')).code, 0);
    assert.equal(await canPing(pod.netns, client.ip), true);
    const podIp = String((prev['ips'] as Array<{ address: string }>)[0]?.address).split('/')[0] ?? '';
    await nsRun(node(), ['nft', `add rule inet weft MY-ADMIN ip saddr ${podIp} drop`]);
    assert.equal(await canPing(pod.netns, client.ip), false);
    assert.equal((await admin('CHECK')).code, 0, 'the admin chain is the admin\'s: CHECK does not judge its rules');
    await nsRun(node(), ['nft', 'flush chain inet weft MY-ADMIN']);
    assert.equal(await canPing(pod.netns, client.ip), true);
    assert.equal((await admin('DEL')).code, 0);
    assert.equal(await canPing(pod.netns, client.ip), false);
  });
});

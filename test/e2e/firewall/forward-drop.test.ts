// The built firewall after the built bridge in a simulated node whose forward policy drops: pod
// traffic passes only while firewall is chained, with iptables-nft's `filter FORWARD` policy DROP and
// with a native nft `inet filter forward` policy drop; prevResult passes through; CHECK, DEL, GC.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CniRunner, type ConfList } from '../../harness/cni-runner.ts';
import { canPing } from '../../harness/probe.ts';
import { Topology, nsExec, nsRun, type SimPod } from '../../harness/topology.ts';
import { isRoot } from '../../helpers/netns.ts';
import { fwNetworkNames } from '../../../plugins/firewall/names.ts';
import { BIN_DIR, runFirewall } from './helpers.ts';

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
});

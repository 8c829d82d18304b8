// The built tuning binary on a pod interface (a veth eth0 in a pod namespace the test creates):
// every key changes the pod, the result carries the new MAC, CHECK sees drift, DEL restores from the
// saved state, and path tricks or missing keys are refused before anything changes.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { execPlugin, type PluginRun } from '../../../testkit/cni-runner.ts';
import { Topology, nsRun, type SimPod } from '../../../testkit/topology.ts';
import { isRoot } from '../../../testkit/netns.ts';

const BIN_DIR = join(import.meta.dirname, '..', '..', '..', 'dist', 'bin');
const skip = !isRoot() ? 'needs root' : !existsSync(join(BIN_DIR, 'tuning')) ? 'dist/bin/tuning missing: run npm run build' : false;

interface LinkView { mac: string; mtu: number; promisc: boolean; allmulti: boolean; txqlen: number; arpNotify: string; rpFilter: string }

describe('tuning (built binary, pod namespace)', { skip, timeout: 120_000 }, () => {
  let topo: Topology;
  let pod: SimPod;
  let dataDir: string;
  let original: LinkView;
  const node = () => topo.nodes[0]?.netns ?? '';

  const view = async (): Promise<LinkView> => {
    const [l] = JSON.parse(await nsRun(pod.netns, ['ip', '-d', '-j', 'link', 'show', 'eth0'])) as Array<{ address: string; mtu: number; flags: string[]; txqlen: number; promiscuity: number }>;
    assert.ok(l);
    const sys = (k: string) => nsRun(pod.netns, ['sysctl', '-n', k]).then((s) => s.trim());
    return {
      mac: l.address, mtu: l.mtu, promisc: l.promiscuity > 0, allmulti: l.flags.includes('ALLMULTI'), txqlen: l.txqlen,
      arpNotify: await sys('net.ipv4.conf.eth0.arp_notify'), rpFilter: await sys('net.ipv4.conf.eth0.rp_filter'),
    };
  };
  const prev = () => ({ cniVersion: '1.0.0', interfaces: [{ name: 'eth0', mac: original.mac, sandbox: pod.path }], ips: [] });
  const run = (command: string, keys: Record<string, unknown>, o: { args?: string; netns?: string } = {}): Promise<PluginRun> => {
    const stdin = { cniVersion: '1.0.0', name: 'tunenet', type: 'tuning', dataDir, prevResult: prev(), ...keys };
    const env: NodeJS.ProcessEnv = { CNI_COMMAND: command, CNI_CONTAINERID: 'ctr-tune', CNI_IFNAME: 'eth0', CNI_PATH: BIN_DIR, CNI_ARGS: o.args ?? '' };
    const netns = o.netns ?? pod.path;
    if (netns !== '') env['CNI_NETNS'] = netns;
    return execPlugin(join(BIN_DIR, 'tuning'), env, JSON.stringify(stdin), { binDirs: [BIN_DIR], nodeNetns: node() });
  };

  before(async () => {
    topo = await Topology.create({ nodes: 1, prefix: 'wtun' });
    const n = topo.nodes[0];
    assert.ok(n);
    pod = await topo.addPod(n, 1);
    await nsRun(pod.netns, ['ip', 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'peer0']);
    await nsRun(pod.netns, ['ip', 'link', 'set', 'eth0', 'up']);
    original = await view();
  });
  beforeEach(() => {
    dataDir = mkdtempSync(join(topo.dir, 'tuning-'));
  });
  after(() => topo?.destroySync());

  const ALL = {
    mac: '02:aa:bb:cc:dd:01', mtu: 1400, promisc: true, allmulti: true, txQLen: 321,
    sysctl: { 'net.ipv4.conf.IFNAME.arp_notify': '1', 'net/ipv4/conf/eth0/rp_filter': '2' },
  };

  it('ADD sets every key, reports the MAC; CHECK passes, then sees drift; DEL restores all; a second DEL succeeds', async () => {
    assert.notEqual(original.arpNotify, '1');
    const add = await run('ADD', ALL);
    assert.equal(add.code, 0, add.stdout + add.stderr);
    assert.equal((add.json?.['interfaces'] as Array<{ mac: string }>)[0]?.mac, '02:aa:bb:cc:dd:01');
    assert.deepEqual(await view(), { mac: '02:aa:bb:cc:dd:01', mtu: 1400, promisc: true, allmulti: true, txqlen: 321, arpNotify: '1', rpFilter: '2' });
    assert.equal(readdirSync(dataDir).filter((f) => f.endsWith('.json')).length, 1);
    assert.equal((await run('CHECK', ALL)).code, 0);
    await nsRun(pod.netns, ['ip', 'link', 'set', 'eth0', 'mtu', '1300']);
    const drift = await run('CHECK', ALL);
    assert.equal(drift.json?.['code'], 140, drift.stdout);
    assert.match(String(drift.json?.['details']), /mtu is 1300/);
    const del = await run('DEL', ALL);
    assert.equal(del.code, 0, del.stdout);
    assert.deepEqual(await view(), original, 'DEL put back every value ADD replaced');
    assert.deepEqual(readdirSync(dataDir), []);
    assert.equal((await run('DEL', ALL)).code, 0);
  });

  it('MAC precedence: mac < CNI_ARGS MAC < runtimeConfig.mac < args.cni.mac', async () => {
    const keys = { mac: '02:00:00:00:00:01', runtimeConfig: { mac: '02:00:00:00:00:03' } };
    const add = await run('ADD', keys, { args: 'IgnoreUnknown=1;MAC=02:00:00:00:00:02' });
    assert.equal(add.code, 0, add.stdout);
    assert.equal((await view()).mac, '02:00:00:00:00:03');
    assert.equal((await run('DEL', keys)).code, 0);
    const add2 = await run('ADD', { ...keys, args: { cni: { mac: '02:00:00:00:00:04' } } }, { args: 'MAC=02:00:00:00:00:02' });
    assert.equal(add2.code, 0, add2.stdout);
    assert.equal((await view()).mac, '02:00:00:00:00:04');
    assert.equal((await run('DEL', keys)).code, 0);
    assert.equal((await view()).mac, original.mac);
  });

  for (const key of ['kernel.hostname', 'net/../kernel/hostname', 'net.ipv4.conf.eth0/../../../../kernel/hostname', 'net.ipv4..conf', 'net/ipv4/conf/../../../proc/sys/kernel/hostname', 'net/ipv4/conf/eth 0/rp_filter', 'net']) {
    it(`refuses sysctl key ${JSON.stringify(key)} with code 7 before changing anything`, async () => {
      const r = await run('ADD', { mtu: 1400, sysctl: { [key]: '1' } });
      assert.equal(r.code, 1);
      assert.equal(r.json?.['code'], 7, r.stdout);
      assert.deepEqual(await view(), original);
      assert.deepEqual(readdirSync(dataDir), []);
    });
  }

  it('a net.* key that does not exist fails the ADD and leaves the pod and the data dir as they were', async () => {
    const r = await run('ADD', { mtu: 1400, mac: '02:aa:bb:cc:dd:09', sysctl: { 'net.ipv4.no_such_key': '1' } });
    assert.equal(r.code, 1, r.stdout);
    assert.equal(r.json?.['code'], 7, r.stdout);
    assert.deepEqual(await view(), original);
    assert.deepEqual(readdirSync(dataDir), []);
  });

  it('a value the kernel refuses half-way (MTU 70000 after a sysctl and a MAC) is code 7 and rolls everything back', async () => {
    const r = await run('ADD', { mac: '02:aa:bb:cc:dd:0a', mtu: 70000, sysctl: { 'net.ipv4.conf.IFNAME.arp_notify': '1' } });
    assert.equal(r.code, 1, r.stdout);
    assert.equal(r.json?.['code'], 7, r.stdout);
    assert.match(String(r.json?.['msg']), /mtu/);
    assert.deepEqual(await view(), original, 'sysctl and MAC written before the MTU are put back');
    assert.deepEqual(readdirSync(dataDir), []);
  });

  it('GC drops the state of attachments not listed, of this network only', async () => {
    const extra = await topo.addPod(topo.nodes[0] ?? assert.fail(), 3);
    await nsRun(extra.netns, ['ip', 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'peer0']);
    assert.equal((await run('ADD', { mtu: 1400 })).code, 0);
    const other = async (id: string, name: string) => execPlugin(join(BIN_DIR, 'tuning'),
      { CNI_COMMAND: 'ADD', CNI_CONTAINERID: id, CNI_IFNAME: 'eth0', CNI_PATH: BIN_DIR, CNI_NETNS: extra.path },
      JSON.stringify({ cniVersion: '1.0.0', name, type: 'tuning', dataDir, mtu: 1300, prevResult: prev() }), { binDirs: [BIN_DIR], nodeNetns: node() });
    assert.equal((await other('ctr-gone', 'tunenet')).code, 0);
    assert.equal((await other('ctr-othernet', 'othernet')).code, 0);
    assert.deepEqual(readdirSync(dataDir).sort(), ['ctr-gone_eth0.json', 'ctr-othernet_eth0.json', 'ctr-tune_eth0.json']);
    const gc = await run('GC', { cniVersion: '1.1.0', 'cni.dev/valid-attachments': [{ containerID: 'ctr-tune', ifname: 'eth0' }] }, { netns: '' });
    assert.equal(gc.code, 0, gc.stdout);
    assert.deepEqual(readdirSync(dataDir).sort(), ['ctr-othernet_eth0.json', 'ctr-tune_eth0.json']);
    assert.equal((await run('DEL', { mtu: 1400 })).code, 0);
    assert.deepEqual(await view(), original);
  });

  it('a sysctl-only config needs no interface (as the reference); DEL restores the sysctl', async () => {
    const bare = await topo.addPod(topo.nodes[0] ?? assert.fail(), 4);
    const all = () => nsRun(bare.netns, ['sysctl', '-n', 'net.ipv4.conf.all.arp_notify']).then((s) => s.trim());
    const before = await all();
    const keys = { sysctl: { 'net.ipv4.conf.all.arp_notify': before === '1' ? '0' : '1' } };
    assert.equal((await run('ADD', keys, { netns: bare.path })).code, 0);
    assert.notEqual(await all(), before);
    assert.equal((await run('DEL', keys, { netns: bare.path })).code, 0);
    assert.equal(await all(), before);
    assert.deepEqual(readdirSync(dataDir), []);
  });

  it('DEL after the netns is gone succeeds and drops the state', async () => {
    const extra = await topo.addPod(topo.nodes[0] ?? assert.fail(), 2);
    await nsRun(extra.netns, ['ip', 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'peer0']);
    assert.equal((await run('ADD', { mtu: 1400 }, { netns: extra.path })).code, 0);
    assert.equal(readdirSync(dataDir).length, 1);
    assert.equal((await run('DEL', { mtu: 1400 }, { netns: '' })).code, 0);
    assert.deepEqual(readdirSync(dataDir), []);
  });
});

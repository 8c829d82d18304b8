// weftd (source entry, under tsx) in a namespace of its own with a veth uplink: kernel state
// checked through our netlink layer. vxlan: VTEP parameters, per-lease neighbour/FDB/route and
// their withdrawal, SIGTERM leaving everything, a stable MAC across restarts. host-gw: refusal to
// start when the node address is not on the uplink.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatLeaseFile, leasePath } from '../../../agent/lease/file/lease-io.ts';
import { RTPROT_WEFT } from '../../../agent/reconcile/desired.ts';
import { Rtnl } from '../../../lib/netlink/index.ts';
import { openNetns, withNetns } from '../../../lib/netns/index.ts';
import { vtepMac } from '../../../lib/flannel/vtep.ts';
import { createTestNetns, spawnInNetns, rootOnly, type TestNetns } from '../../../testkit/netns.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The own lease stays below 10.244.200.0/24, the peer lease the cases write.
function startWeftd(ns: TestNetns, dir: string, backend: string, extra: string[] = []): ChildProcess {
  writeFileSync(join(dir, 'net-conf.json'), JSON.stringify({ Network: '10.244.0.0/16', SubnetMax: '10.244.199.0', Backend: { Type: backend } }));
  return spawnInNetns(ns.name, [process.execPath, '--import', 'tsx', join(ROOT, 'agent', 'main.ts'),
    '--net-conf', join(dir, 'net-conf.json'), '--store', `file:${join(dir, 'leases')}`, '--iface', 'eth0',
    '--subnet-file', join(dir, 'subnet.env'), '--resync-interval', '500', ...extra], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
}

async function poll(what: string, pred: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function exited(p: ChildProcess): Promise<number | null> {
  return p.exitCode !== null ? Promise.resolve(p.exitCode) : new Promise((r) => p.once('close', (c) => r(c)));
}

void describe('weftd in a namespace', rootOnly(), () => {
  let ns: TestNetns;
  let dir: string;
  let rtnl: Rtnl;
  before(async () => {
    ns = await createTestNetns();
    dir = mkdtempSync(join(tmpdir(), 'weftd-ns-'));
    for (const cmd of [['ip', 'link', 'set', 'lo', 'up'], ['ip', 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'eth1'], ['ip', 'link', 'set', 'eth1', 'up'], ['ip', 'addr', 'add', '192.0.2.11/24', 'dev', 'eth0'], ['ip', 'link', 'set', 'eth0', 'up']]) {
      const r = await ns.exec(cmd);
      assert.equal(r.code, 0, r.stderr);
    }
    const h = openNetns(ns.path);
    rtnl = withNetns(h, () => Rtnl.open());
    h.close();
  });
  after(async () => {
    rtnl?.close();
    await ns?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('host-gw refuses to start when the node address is not on the uplink', async () => {
    const p = startWeftd(ns, dir, 'host-gw', ['--public-ip', '198.51.100.7']);
    let err = '';
    p.stderr?.on('data', (d: Buffer) => { err += d.toString(); });
    assert.equal(await exited(p), 1);
    assert.match(err, /198\.51\.100\.7 is not on the uplink eth0/);
  });

  it('vxlan: VTEP, per-lease entries, withdrawal, SIGTERM and a restart keeping everything', async () => {
    rmSync(join(dir, 'leases'), { recursive: true, force: true });
    let p = startWeftd(ns, dir, 'vxlan');
    await poll('subnet.env', () => { try { return readFileSync(join(dir, 'subnet.env'), 'utf8').includes('FLANNEL_MTU=1450'); } catch { return false; } });
    await poll('VTEP', () => rtnl.getLink('flannel.1')?.up === true);
    const vtep = rtnl.getLink('flannel.1');
    assert.ok(vtep);
    assert.equal(vtep.mac, vtepMac('192.0.2.11', 1));
    assert.equal(vtep.mtu, 1450);
    assert.deepEqual({ ...vtep.vxlan }, { vni: 1, port: 8472, local: '192.0.2.11', devIndex: rtnl.getLink('eth0')?.index, learning: false });
    const env = readFileSync(join(dir, 'subnet.env'), 'utf8');
    const own = /FLANNEL_SUBNET=([0-9.]+)\.1\/24/.exec(env)?.[1];
    assert.ok(own);
    assert.deepEqual(rtnl.listAddrs({ family: 4, index: vtep.index }).map((a) => a.cidr), [`${own}.0/32`]);

    const remote = { subnet: '10.244.200.0/24', publicIp: '192.0.2.50', backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: '0e:11:22:33:44:55' }, expiration: Date.now() + 3_600_000 };
    const tmp = join(dir, 'leases', '.t');
    writeFileSync(tmp, formatLeaseFile(remote));
    renameSync(tmp, leasePath(join(dir, 'leases'), remote.subnet));
    const route = () => rtnl.listRoutes({ family: 4, table: 254 }).find((r) => r.dst === remote.subnet);
    await poll('route to the remote lease', () => route() !== undefined);
    assert.deepEqual([route()?.gw, route()?.oif, route()?.onlink, route()?.protocol], ['10.244.200.0', vtep.index, true, RTPROT_WEFT]);
    const neigh = rtnl.listNeigh({ family: 4, index: vtep.index }).find((n) => n.ip === '10.244.200.0');
    assert.ok(neigh?.permanent && neigh.mac === '0e:11:22:33:44:55');
    assert.ok(rtnl.listFdb({ index: vtep.index }).some((f) => f.mac === '0e:11:22:33:44:55' && f.dst === '192.0.2.50' && f.permanent));

    rmSync(leasePath(join(dir, 'leases'), remote.subnet));
    await poll('withdrawal', () => route() === undefined && !rtnl.listNeigh({ family: 4, index: vtep.index }).some((n) => n.ip === '10.244.200.0') &&
      !rtnl.listFdb({ index: vtep.index }).some((f) => f.mac === '0e:11:22:33:44:55'));

    writeFileSync(tmp, formatLeaseFile(remote));
    renameSync(tmp, leasePath(join(dir, 'leases'), remote.subnet));
    await poll('route again', () => route() !== undefined);
    p.kill('SIGTERM');
    assert.equal(await exited(p), 0);
    assert.equal(rtnl.getLink('flannel.1')?.index, vtep.index, 'VTEP left in place');
    assert.ok(route(), 'route left in place');

    p = startWeftd(ns, dir, 'vxlan');
    try {
      await sleep(2000);
      assert.equal(rtnl.getLink('flannel.1')?.index, vtep.index, 'same device after restart');
      assert.equal(readFileSync(join(dir, 'subnet.env'), 'utf8'), env, 'same lease after restart');
      assert.ok(route());
    } finally {
      p.kill('SIGTERM');
      await exited(p);
    }
  });
});

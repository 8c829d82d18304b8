// The IPv6 side of the vxlan and host-gw backends against constructed dual-stack leases, in a
// namespace of its own with a veth uplink carrying an IPv4 and an IPv6 address: flannel-v6.<VNI>
// parameters, per-lease IPv6 neighbour/FDB/onlink route, host-gw IPv6 routes via PublicIPv6, repair
// after drift and withdrawal on lease removal, all read back through our netlink layer.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBackend, type Backend } from '../../../agent/backend/index.ts';
import { findUplinkV6 } from '../../../agent/backend/uplink-v6.ts';
import type { BackendConf } from '../../../agent/config/backend-conf.ts';
import type { Lease } from '../../../agent/lease/store.ts';
import { createAgentLog } from '../../../agent/log.ts';
import { RTPROT_WEFT } from '../../../agent/reconcile/desired.ts';
import type { DevIndexes } from '../../../agent/reconcile/diff.ts';
import { familyTargets, reconcileFamily } from '../../../agent/reconcile/family.ts';
import { findUplink, type Uplink } from '../../../agent/uplink.ts';
import { Rtnl } from '../../../lib/netlink/index.ts';
import { openNetns, withNetns, type NetnsHandle } from '../../../lib/netns/index.ts';
import { createTestNetns, rootOnly, type TestNetns } from '../../../testkit/netns.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const log = createAgentLog('error', () => {});
const conf = (type: BackendConf['type']): BackendConf => ({ type, vni: 1, port: 8472, directRouting: false, gbp: false, checksumOffload: 'on' });
const own: Lease = {
  subnet: '10.244.1.0/24', publicIp: '192.0.2.11', backendType: 'vxlan', backendData: {}, expiration: 0,
  ipv6Subnet: 'fd00:10:244:1::/64', publicIpv6: '2001:db8:2::11',
};
const peer = (n: number, type = 'vxlan'): Lease => ({
  subnet: `10.244.${n}.0/24`, publicIp: `192.0.2.${10 + n}`, backendType: type, expiration: 0,
  backendData: type === 'vxlan' ? { VNI: 1, VtepMAC: `0e:00:00:00:04:0${n}` } : {},
  ipv6Subnet: `fd00:10:244:${n}::/64`, publicIpv6: `2001:db8:2::${10 + n}`,
  backendV6Data: type === 'vxlan' ? { VNI: 1, VtepMAC: `0e:00:00:00:06:0${n}` } : {},
});

void describe('dual-stack backends in a namespace', rootOnly(), () => {
  let ns: TestNetns;
  let h: NetnsHandle;
  let rtnl: Rtnl;
  let dir: string;
  let uplink: Uplink;

  /** One reconcile pass over both families, as weftd runs it; returns the number of operations applied. */
  function pass(be: Backend, leases: Lease[]): { dev: DevIndexes; applied: number } {
    return withNetns(h, () => {
      const dev = be.ensureLocal(rtnl, own);
      let applied = 0;
      const targets = familyTargets({ network: '10.244.0.0/16', ipv6Network: 'fd00:10:244::/48' }, own, { publicIp: '192.0.2.11', cidr: '192.0.2.11/24' },
        { publicIp: '2001:db8:2::11', cidr: '2001:db8:2::11/64' });
      for (const t of targets) {
        const { out } = reconcileFamily(rtnl, t, { backend: be.type, directRouting: false, vni: 1 }, leases, dev);
        assert.deepEqual(out.failed.map((x) => x.error.message), []);
        applied += out.applied.length;
      }
      return { dev, applied };
    });
  }

  const routes6 = () => rtnl.listRoutes({ family: 6, table: 254 }).filter((r) => r.protocol === RTPROT_WEFT);

  before(async () => {
    ns = await createTestNetns();
    dir = mkdtempSync(join(tmpdir(), 'weft-ds-ns-'));
    for (const cmd of [
      ['ip', 'link', 'set', 'lo', 'up'], ['ip', 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'eth1'], ['ip', 'link', 'set', 'eth1', 'up'],
      ['ip', 'addr', 'add', '192.0.2.11/24', 'dev', 'eth0'], ['ip', '-6', 'addr', 'add', '2001:db8:2::11/64', 'dev', 'eth0', 'nodad'], ['ip', 'link', 'set', 'eth0', 'up'],
    ]) {
      const r = await ns.exec(cmd);
      assert.equal(r.code, 0, r.stderr);
    }
    h = openNetns(ns.path);
    rtnl = withNetns(h, () => Rtnl.open());
    uplink = findUplink(rtnl, { iface: ['eth0'] });
  });
  after(async () => {
    rtnl?.close();
    h?.close();
    await ns?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('vxlan: flannel-v6.1 over PublicIPv6, IPv6 entries per lease, repair after drift, withdrawal', () => {
    const ipv6 = findUplinkV6(rtnl, uplink);
    assert.deepEqual(ipv6, { publicIp: '2001:db8:2::11', cidr: '2001:db8:2::11/64', onUplink: true });
    const be = createBackend(conf('vxlan'), uplink, { subnetFile: join(dir, 'subnet.env'), log, ipv6 });
    const first = pass(be, [own, peer(2), peer(3)]);
    const v6 = rtnl.getLink('flannel-v6.1');
    assert.ok(v6?.up);
    assert.equal(first.dev.vtep6, v6.index);
    assert.equal(v6.mac, be.backendV6Data?.()?.['VtepMAC']);
    assert.equal(v6.mtu, 1430);
    assert.deepEqual({ ...v6.vxlan }, { vni: 1, port: 8472, local: '2001:db8:2::11', devIndex: uplink.index, learning: false });
    assert.deepEqual(rtnl.listAddrs({ family: 6, index: v6.index }).filter((a) => a.scope === 0).map((a) => a.cidr), ['fd00:10:244:1::/128']);
    assert.equal(withNetns(h, () => readFileSync('/proc/sys/net/ipv6/conf/flannel-v6.1/accept_ra', 'utf8').trim()), '0');
    assert.equal(JSON.parse(readFileSync(join(dir, 'weft-vtep6.json'), 'utf8')).name, 'flannel-v6.1');

    assert.deepEqual(routes6().map((r) => [r.dst, r.gw, r.oif, r.onlink]), [
      ['fd00:10:244:2::/64', 'fd00:10:244:2::', v6.index, true], ['fd00:10:244:3::/64', 'fd00:10:244:3::', v6.index, true],
    ]);
    const neighs = rtnl.listNeigh({ family: 6, index: v6.index }).filter((n) => n.permanent).map((n) => [n.ip, n.mac]).sort();
    assert.deepEqual(neighs, [['fd00:10:244:2::', '0e:00:00:00:06:02'], ['fd00:10:244:3::', '0e:00:00:00:06:03']]);
    const fdbs = rtnl.listFdb({ index: v6.index }).filter((f) => f.permanent && f.dst !== undefined).map((f) => [f.mac, f.dst]).sort();
    assert.deepEqual(fdbs, [['0e:00:00:00:06:02', '2001:db8:2::12'], ['0e:00:00:00:06:03', '2001:db8:2::13']]);
    // The IPv4 side is still on flannel.1, with the IPv4 MAC.
    const v4 = rtnl.getLink('flannel.1');
    assert.ok(v4);
    assert.deepEqual(rtnl.listFdb({ index: v4.index }).filter((f) => f.permanent).map((f) => f.dst).sort(), ['192.0.2.12', '192.0.2.13']);

    assert.equal(pass(be, [own, peer(2), peer(3)]).applied, 0, 'a healthy state changes nothing');
    // Drift: someone deletes an IPv6 route and a neighbour; the next pass puts them back.
    withNetns(h, () => {
      rtnl.delRoute({ dst: 'fd00:10:244:2::/64', protocol: RTPROT_WEFT, table: 254 });
      rtnl.delNeigh({ index: v6.index, ip: 'fd00:10:244:3::' });
    });
    assert.equal(pass(be, [own, peer(2), peer(3)]).applied, 2);
    assert.equal(routes6().length, 2);
    // Lease 3 removed: its IPv6 route, neighbour and FDB entry go, lease 2's stay.
    pass(be, [own, peer(2)]);
    assert.deepEqual(routes6().map((r) => r.dst), ['fd00:10:244:2::/64']);
    assert.deepEqual(rtnl.listFdb({ index: v6.index }).filter((f) => f.permanent && f.dst !== undefined).map((f) => f.dst), ['2001:db8:2::12']);
    assert.deepEqual(rtnl.listNeigh({ family: 6, index: v6.index }).filter((n) => n.permanent).map((n) => n.ip), ['fd00:10:244:2::']);
    // Flap: the VTEP deleted; the next pass re-creates it and re-programs its entries.
    withNetns(h, () => rtnl.deleteLink(v6.index));
    const again = pass(be, [own, peer(2)]);
    assert.notEqual(again.dev.vtep6, v6.index);
    assert.deepEqual(routes6().map((r) => [r.dst, r.oif]), [['fd00:10:244:2::/64', again.dev.vtep6]]);
    pass(be, [own]);
    assert.deepEqual(routes6(), []);
  });

  it('weftd with the udp backend and EnableIPv6 refuses to start, naming the key', async () => {
    writeFileSync(join(dir, 'net-conf.json'), JSON.stringify({ Network: '10.244.0.0/16', EnableIPv6: true, IPv6Network: 'fd00:10:244::/56', Backend: { Type: 'udp' } }));
    const r = await ns.exec([process.execPath, '--import', 'tsx', join(ROOT, 'agent', 'main.ts'), '--net-conf', join(dir, 'net-conf.json'),
      '--store', `file:${join(dir, 'leases')}`, '--iface', 'eth0', '--subnet-file', join(dir, 'subnet.env')]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /the udp backend is IPv4-only \(as flannel's\): set EnableIPv6 to false/);
    assert.equal(rtnl.getLink('flannel0'), null, 'no TUN made');
  });

  it('host-gw: a route to each peer IPv6 subnet via its PublicIPv6 on the uplink, withdrawn with the lease', async () => {
    for (const name of ['flannel.1', 'flannel-v6.1']) {
      const l = rtnl.getLink(name);
      if (l) withNetns(h, () => rtnl.deleteLink(l.index));
    }
    const be = createBackend(conf('host-gw'), uplink, { subnetFile: join(dir, 'subnet.env'), log, ipv6: findUplinkV6(rtnl, uplink) });
    pass(be, [own, peer(2, 'host-gw'), peer(3, 'host-gw')]);
    assert.deepEqual(routes6().map((r) => [r.dst, r.gw, r.oif, r.onlink]), [
      ['fd00:10:244:2::/64', '2001:db8:2::12', uplink.index, false], ['fd00:10:244:3::/64', '2001:db8:2::13', uplink.index, false],
    ]);
    assert.deepEqual(rtnl.listRoutes({ family: 4, table: 254 }).filter((r) => r.protocol === RTPROT_WEFT).map((r) => r.gw), ['192.0.2.12', '192.0.2.13']);
    pass(be, [own, peer(3, 'host-gw')]);
    assert.deepEqual(routes6().map((r) => r.gw), ['2001:db8:2::13']);
    const r = await ns.exec(['ip', '-6', 'route', 'show', 'proto', '87']);
    assert.match(r.stdout, /fd00:10:244:3::\/64 via 2001:db8:2::13 dev eth0/);
  });
});

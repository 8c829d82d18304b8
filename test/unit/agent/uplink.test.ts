import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chooseUplink } from '../../../agent/uplink.ts';
import type { Addr, Link, Route } from '../../../lib/netlink/index.ts';

const link = (index: number, name: string, o: Partial<Link> = {}): Link =>
  ({ index, name, flags: 1, up: true, type: 1, mtu: 1500, mac: '02:00:00:00:00:0' + index, operState: 'up', extra: [], ...o });
const addr = (index: number, cidr: string, scope = 0): Addr => {
  const [address, prefix] = cidr.split('/') as [string, string];
  return { index, family: 4, cidr, address, prefix: Number(prefix), scope, flags: 0 } as Addr;
};
const defRoute = (oif: number): Route => ({ family: 4, dst: '0.0.0.0/0', gw: '10.0.0.1', oif, onlink: false, scope: 0, table: 254, protocol: 3, type: 1, flags: 0, extra: [] });

const links = [link(1, 'lo', { type: 772 }), link(2, 'eth0', { mtu: 9000 }), link(3, 'eth1')];
const addrs = [addr(1, '127.0.0.1/8', 254), addr(2, '192.0.2.11/24'), addr(2, '192.0.2.99/24'), addr(3, '10.0.0.5/16')];

void describe('chooseUplink', () => {
  it('defaults to the default route\'s interface and its first address', () => {
    const u = chooseUplink(links, addrs, [defRoute(3)], {});
    assert.deepEqual(u, { index: 3, name: 'eth1', mtu: 1500, publicIp: '10.0.0.5', cidr: '10.0.0.5/16', publicIpOnUplink: true });
  });

  it('without a default route: the first up, non-loopback interface with an address', () => {
    assert.equal(chooseUplink(links, addrs, [], {}).name, 'eth0');
  });

  it('--iface by name or by address; --public-ip picks the matching address', () => {
    assert.equal(chooseUplink(links, addrs, [defRoute(3)], { iface: ['eth0'] }).mtu, 9000);
    assert.equal(chooseUplink(links, addrs, [defRoute(3)], { iface: ['192.0.2.11'] }).name, 'eth0');
    const u = chooseUplink(links, addrs, [defRoute(3)], { publicIp: '192.0.2.99' });
    assert.deepEqual([u.name, u.publicIp, u.cidr, u.publicIpOnUplink], ['eth0', '192.0.2.99', '192.0.2.99/24', true]);
  });

  it('a public IP that is not on the uplink (NAT in front of the node) is kept and flagged', () => {
    const u = chooseUplink(links, addrs, [], { iface: ['eth0'], publicIp: '198.51.100.7' });
    assert.deepEqual([u.publicIp, u.cidr, u.publicIpOnUplink], ['198.51.100.7', '192.0.2.11/24', false]);
  });

  it('errors name the flag or the missing piece', () => {
    assert.throws(() => chooseUplink(links, addrs, [], { iface: ['eth9'] }), /--iface eth9: no such interface/);
    assert.throws(() => chooseUplink([link(1, 'lo', { type: 772 })], [], [], {}), /cannot find the uplink/);
    assert.throws(() => chooseUplink([link(4, 'eth2')], [], [], { iface: ['eth2'] }), /eth2 has no global IPv4 address/);
  });

  it('flanneld order: each --iface in turn, then --iface-regex on addresses then names, then --iface-can-reach', () => {
    assert.equal(chooseUplink(links, addrs, [], { iface: ['eth9', '10.0.0.5', 'eth0'] }).name, 'eth1');
    assert.equal(chooseUplink(links, addrs, [], { iface: ['eth9'], ifaceRegex: [/^10\./] }).name, 'eth1');
    assert.equal(chooseUplink(links, addrs, [], { ifaceRegex: [/^nope/, /^eth0$/] }).name, 'eth0');
    const { gw: _gw, ...noGw } = defRoute(3);
    const lan: Route = { ...noGw, dst: '192.0.2.0/24' };
    const host: Route = { ...defRoute(2), dst: '10.9.0.0/16' };
    assert.equal(chooseUplink(links, addrs, [defRoute(3), host, lan], { ifaceCanReach: '10.9.1.1' }).name, 'eth0');
    assert.equal(chooseUplink(links, addrs, [defRoute(3), host, lan], { ifaceCanReach: '8.8.8.8' }).name, 'eth1');
    assert.throws(() => chooseUplink(links, addrs, [], { iface: ['eth9'], ifaceRegex: [/^x/], ifaceCanReach: '8.8.8.8' }), /--iface eth9, --iface-regex \^x, --iface-can-reach 8\.8\.8\.8: no such/);
    assert.throws(() => chooseUplink(links, addrs, [], { ifaceCanReach: 'host' }), /--iface-can-reach "host" is not an IPv4/);
  });
});

// Link verbs against the real kernel, in namespaces this test creates; state checked with `ip -j`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { NetlinkError, isExists, isNotFound } from '../../../../lib/netlink/errors.ts';
import type { Rtnl } from '../../../../lib/netlink/rtnl.ts';
import { NsFixture, thrown, type TestNs } from './ns-fixture.ts';

type IpLink = { ifindex: number; ifname: string; mtu: number; address: string; flags: string[]; master?: string; link_netnsid?: number; linkinfo?: { info_kind?: string; info_data?: Record<string, unknown>; info_slave_data?: Record<string, unknown> } };

const fx = new NsFixture();
let a: TestNs;
let b: TestNs;
let r: Rtnl;
before(() => { a = fx.create(); b = fx.create(); r = a.rtnl; });
after(() => fx.cleanup());

const ipLink = (ns: TestNs, name: string): IpLink => (ns.ipj('-d', 'link', 'show', 'dev', name) as IpLink[])[0]!;
const idx = (name: string): number => {
  const l = r.getLink(name);
  assert.ok(l, `link ${name} exists`);
  return l.index;
};

test('listLinks/getLink see loopback; getLink of a missing name is null', () => {
  const lo = r.listLinks().find((l) => l.name === 'lo');
  assert.ok(lo);
  assert.equal(lo.type, 772);
  assert.equal(r.getLink('lo')?.index, lo.index);
  assert.equal(r.getLinkByIndex(lo.index)?.name, 'lo');
  assert.equal(r.getLink('nope0'), null);
  assert.equal(r.getLinkByIndex(99999), null);
});

test('addVeth: pair with MTU and MACs; EEXIST when added twice; deleteLink twice is ENODEV', () => {
  r.addVeth({ name: 'wv0', peerName: 'wv1', mtu: 1400, mac: '02:aa:00:00:00:01', peerMac: '02:aa:00:00:00:02' });
  const k0 = ipLink(a, 'wv0');
  const k1 = ipLink(a, 'wv1');
  assert.equal(k0.mtu, 1400);
  assert.equal(k1.mtu, 1400);
  assert.equal(k0.address, '02:aa:00:00:00:01');
  assert.equal(k1.address, '02:aa:00:00:00:02');
  assert.equal(k0.linkinfo?.info_kind, 'veth');
  const ours = r.getLink('wv0');
  assert.equal(ours?.kind, 'veth');
  assert.equal(ours?.peerIndex, k1.ifindex);
  assert.equal(ours?.mac, '02:aa:00:00:00:01');
  const e = thrown(() => r.addVeth({ name: 'wv0', peerName: 'wv9' }));
  assert.ok(isExists(e), String(e));
  r.deleteLink(k0.ifindex);
  assert.equal(r.getLink('wv1'), null, 'peer went with it');
  const e2 = thrown(() => r.deleteLink(k0.ifindex));
  assert.ok(e2 instanceof NetlinkError && e2.code === 'ENODEV' && isNotFound(e2), String(e2));
});

test('addVeth with the peer created in a second namespace by fd', () => {
  r.addVeth({ name: 'host0', peerName: 'eth0', peerNetnsFd: b.handle.fd });
  assert.equal(r.getLink('eth0'), null);
  const peer = b.rtnl.getLink('eth0');
  assert.ok(peer);
  assert.equal(ipLink(b, 'eth0').ifname, 'eth0');
  const host = r.getLink('host0');
  assert.equal(host?.peerIndex, peer.index);
  assert.equal(typeof host?.linkNetnsId, 'number');
  r.deleteLink(host!.index);
  assert.equal(b.rtnl.getLink('eth0'), null);
});

test('setLinkUp/Down, setMtu, setMac, renameLink, setLinkNetns', () => {
  r.addVeth({ name: 'sx0', peerName: 'sx1' });
  const i = idx('sx0');
  r.setMtu(i, 1300);
  r.setMac(i, '02:BB:00:00:00:09');
  r.renameLink(i, 'sx0new');
  r.setLinkUp(i);
  let k = ipLink(a, 'sx0new');
  assert.equal(k.mtu, 1300);
  assert.equal(k.address, '02:bb:00:00:00:09');
  assert.ok(k.flags.includes('UP'));
  assert.equal(r.getLinkByIndex(i)?.up, true);
  r.setLinkDown(i);
  k = ipLink(a, 'sx0new');
  assert.ok(!k.flags.includes('UP'));
  r.setLinkNetns(idx('sx1'), b.handle.fd);
  assert.equal(r.getLink('sx1'), null);
  assert.ok(b.rtnl.getLink('sx1'));
  r.deleteLink(i);
});

test('bridge: addBridge, setMaster, setHairpin on/off, setNoMaster', () => {
  r.addBridge({ name: 'wbr0', mtu: 1450 });
  assert.equal(ipLink(a, 'wbr0').linkinfo?.info_kind, 'bridge');
  assert.ok(isExists(thrown(() => r.addBridge({ name: 'wbr0' }))));
  r.addVeth({ name: 'bp0', peerName: 'bp1' });
  const br = idx('wbr0');
  const port = idx('bp0');
  r.setMaster(port, br);
  assert.equal(ipLink(a, 'bp0').master, 'wbr0');
  assert.equal(r.getLinkByIndex(port)?.master, br);
  assert.equal(r.getLinkByIndex(port)?.slaveKind, 'bridge');
  r.setHairpin(port, true);
  const bl = (a.exec('bridge', '-j', '-d', 'link', 'show', 'dev', 'bp0'));
  assert.equal((JSON.parse(bl) as Array<{ hairpin?: boolean }>)[0]?.hairpin, true);
  assert.equal(ipLink(a, 'bp0').linkinfo?.info_slave_data?.['hairpin'], true);
  r.setHairpin(port, false);
  assert.equal(ipLink(a, 'bp0').linkinfo?.info_slave_data?.['hairpin'], false);
  r.setNoMaster(port);
  assert.equal(ipLink(a, 'bp0').master, undefined);
  assert.equal(r.getLinkByIndex(port)?.master, undefined);
  r.deleteLink(port);
});

test('vxlan: VNI, port, local, learning off; parsed back', () => {
  r.addVeth({ name: 'up0', peerName: 'up1' });
  const dev = idx('up0');
  r.addVxlan({ name: 'flannel.7', vni: 7, port: 8472, local: '192.168.50.2', devIndex: dev, learning: false, mtu: 1450 });
  const k = ipLink(a, 'flannel.7');
  assert.equal(k.linkinfo?.info_kind, 'vxlan');
  const d = k.linkinfo?.info_data ?? {};
  assert.equal(d['id'], 7);
  assert.equal(d['port'], 8472);
  assert.equal(d['local'], '192.168.50.2');
  assert.equal(d['learning'], false);
  assert.equal(d['link'], 'up0');
  assert.equal(k.mtu, 1450);
  assert.deepEqual(r.getLink('flannel.7')?.vxlan, { vni: 7, port: 8472, local: '192.168.50.2', devIndex: dev, learning: false });
  assert.ok(isExists(thrown(() => r.addVxlan({ name: 'flannel.7', vni: 7, port: 8472, local: '192.168.50.2', learning: false }))));
});

// Neighbour and FDB verbs against the real kernel, in a namespace this test creates.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { NetlinkError, isExists, isNotFound } from '../../../../lib/netlink/errors.ts';
import type { Rtnl } from '../../../../lib/netlink/rtnl.ts';
import { NsFixture, thrown, type TestNs } from './ns-fixture.ts';

type IpNeigh = { dst: string; dev: string; lladdr?: string; state: string[] };
type BrFdb = { mac: string; ifname: string; dst?: string; flags: string[]; state: string };

const fx = new NsFixture();
let ns: TestNs;
let r: Rtnl;
let dev: number;
let vx: number;
before(() => {
  ns = fx.create();
  r = ns.rtnl;
  r.addVeth({ name: 'n0', peerName: 'n1' });
  dev = r.getLink('n0')!.index;
  r.setLinkUp(dev);
  r.addAddr({ index: dev, cidr: '10.50.0.2/24' });
  r.addVxlan({ name: 'flannel.1', vni: 1, port: 8472, local: '10.50.0.2', learning: false });
  vx = r.getLink('flannel.1')!.index;
  r.setLinkUp(vx);
});
after(() => fx.cleanup());

test('permanent IPv4 neighbour: add, list, EEXIST twice, replace, delete, ENOENT twice', () => {
  r.addNeigh({ index: vx, ip: '10.244.1.0', mac: '0A:58:0A:F4:01:00', permanent: true });
  const k = (ns.ipj('neigh', 'show', 'dev', 'flannel.1') as IpNeigh[]).find((x) => x.dst === '10.244.1.0');
  assert.equal(k?.lladdr, '0a:58:0a:f4:01:00');
  assert.deepEqual(k?.state, ['PERMANENT']);
  const ours = r.listNeigh({ family: 4, index: vx });
  assert.deepEqual(ours.map((n) => [n.ip, n.mac, n.permanent]), [['10.244.1.0', '0a:58:0a:f4:01:00', true]]);
  assert.ok(isExists(thrown(() => r.addNeigh({ index: vx, ip: '10.244.1.0', mac: '0a:58:0a:f4:01:00', permanent: true }))));
  r.addNeigh({ index: vx, ip: '10.244.1.0', mac: '0a:58:0a:f4:01:99', permanent: true, replace: true });
  assert.equal(r.listNeigh({ index: vx })[0]?.mac, '0a:58:0a:f4:01:99');
  r.delNeigh({ index: vx, ip: '10.244.1.0' });
  assert.deepEqual(ns.ipj('neigh', 'show', 'dev', 'flannel.1'), []);
  const e = thrown(() => r.delNeigh({ index: vx, ip: '10.244.1.0' }));
  assert.ok(e instanceof NetlinkError && e.code === 'ENOENT' && isNotFound(e), String(e));
});

test('IPv6 neighbour', () => {
  r.addNeigh({ index: dev, ip: 'fd00::9', mac: '02:00:00:00:00:09', permanent: true });
  assert.equal(r.listNeigh({ family: 6, index: dev }).find((n) => n.ip === 'fd00::9')?.mac, '02:00:00:00:00:09');
  r.delNeigh({ index: dev, ip: 'fd00::9' });
});

test('vxlan FDB entry with dst: add, list, EEXIST twice, delete, ENOENT twice', () => {
  r.addFdb({ index: vx, mac: '0a:58:0a:f4:01:00', dst: '10.50.0.7' });
  const k = (JSON.parse(ns.exec('bridge', '-j', 'fdb', 'show', 'dev', 'flannel.1')) as BrFdb[]).find((x) => x.mac === '0a:58:0a:f4:01:00');
  assert.equal(k?.dst, '10.50.0.7');
  assert.ok(k?.flags.includes('self'), JSON.stringify(k));
  assert.equal(k?.state, 'permanent');
  const ours = r.listFdb({ index: vx }).filter((f) => f.mac === '0a:58:0a:f4:01:00');
  assert.deepEqual(ours.map((f) => [f.dst, f.self, f.permanent]), [['10.50.0.7', true, true]]);
  assert.ok(isExists(thrown(() => r.addFdb({ index: vx, mac: '0a:58:0a:f4:01:00', dst: '10.50.0.7' }))));
  r.delFdb({ index: vx, mac: '0a:58:0a:f4:01:00', dst: '10.50.0.7' });
  assert.equal(r.listFdb({ index: vx }).filter((f) => f.mac === '0a:58:0a:f4:01:00').length, 0);
  const e = thrown(() => r.delFdb({ index: vx, mac: '0a:58:0a:f4:01:00', dst: '10.50.0.7' }));
  assert.ok(isNotFound(e), String(e));
});

test('bridge FDB entry on a port (master table)', () => {
  r.addBridge({ name: 'fbr0' });
  const br = r.getLink('fbr0')!.index;
  const port = r.getLink('n1')!.index;
  r.setMaster(port, br);
  r.addFdb({ index: port, mac: '02:00:00:00:00:42', self: false });
  const got = r.listFdb({ index: port }).find((f) => f.mac === '02:00:00:00:00:42');
  assert.equal(got?.master, br);
  assert.equal(got?.self, false);
  r.delFdb({ index: port, mac: '02:00:00:00:00:42', self: false });
  assert.equal(r.listFdb({ index: port }).some((f) => f.mac === '02:00:00:00:00:42'), false);
});

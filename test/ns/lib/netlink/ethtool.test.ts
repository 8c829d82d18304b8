// The ethtool genetlink family against the real kernel, on a VXLAN device in a namespace this test
// creates: set tx-checksum-ip-generic off and on, read it back ourselves and with `ethtool -k`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ethtool, TX_CHECKSUM_IP_GENERIC } from '../../../../lib/netlink/ethtool.ts';
import { NetlinkError } from '../../../../lib/netlink/errors.ts';
import { withNetns } from '../../../../lib/netns/index.ts';
import { NsFixture, thrown, type TestNs } from './ns-fixture.ts';

const fx = new NsFixture();
let ns: TestNs;
let et: Ethtool;
before(() => {
  ns = fx.create();
  ns.rtnl.addVxlan({ name: 'vxt.9', vni: 9, port: 8472, local: '192.168.77.1', learning: false, mtu: 1450 });
  et = withNetns(ns.handle, () => Ethtool.open());
});
after(() => {
  et?.close();
  fx.cleanup();
});

/** `ethtool -k <dev>`'s line for the feature: "on", "off" (and "[fixed]" when it cannot change). */
function ethtoolK(dev: string, feature: string): string {
  const line = ns.exec('ethtool', '-k', dev).split('\n').find((l) => l.trim().startsWith(`${feature}:`));
  assert.ok(line, `ethtool -k ${dev} lists ${feature}`);
  return line.split(':')[1]?.trim() ?? '';
}

test('a new VXLAN device starts with tx-checksum-ip-generic on (the kernel default)', () => {
  assert.equal(ethtoolK('vxt.9', TX_CHECKSUM_IP_GENERIC), 'on');
  assert.ok(et.activeFeatures('vxt.9').has(TX_CHECKSUM_IP_GENERIC));
});

test('setFeatures off: ethtool -k and our read agree; TSO follows (it needs checksum offload)', () => {
  et.setFeatures('vxt.9', { [TX_CHECKSUM_IP_GENERIC]: false });
  assert.equal(ethtoolK('vxt.9', TX_CHECKSUM_IP_GENERIC), 'off');
  const active = et.activeFeatures('vxt.9');
  assert.ok(!active.has(TX_CHECKSUM_IP_GENERIC));
  assert.ok(!active.has('tx-tcp-segmentation'));
  et.setFeatures('vxt.9', { [TX_CHECKSUM_IP_GENERIC]: false }); // idempotent
  assert.equal(ethtoolK('vxt.9', TX_CHECKSUM_IP_GENERIC), 'off');
});

test('setFeatures on restores it', () => {
  et.setFeatures('vxt.9', { [TX_CHECKSUM_IP_GENERIC]: true });
  assert.equal(ethtoolK('vxt.9', TX_CHECKSUM_IP_GENERIC), 'on');
  assert.ok(et.activeFeatures('vxt.9').has(TX_CHECKSUM_IP_GENERIC));
});

test('a missing device is a NetlinkError with ENODEV', () => {
  const e = thrown(() => et.setFeatures('nope.0', { [TX_CHECKSUM_IP_GENERIC]: false }));
  assert.ok(e instanceof NetlinkError && e.code === 'ENODEV', String(e));
});

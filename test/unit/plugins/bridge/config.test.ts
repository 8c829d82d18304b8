// Bridge config normalisation and derived names (no root needed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cniCode } from '../../lib/cni/helpers.ts';
import { parseBridgeConfig } from '../../../../plugins/bridge/config.ts';
import { fnv1a32 } from '../../../../lib/hash/fnv.ts';
import { elementComment, masqNames } from '../../../../plugins/bridge/names.ts';
import { broadcastOf, subnetOf } from '../../../../lib/ip/cidr.ts';
import { normalizeKeys } from '../../../../lib/cni/decode.ts';
import { parseValidAttachments } from '../../../../plugins/bridge/gc.ts';
import { validate as bridgeValidate } from '../../../../gen/validators/bridge.js';

const base = { cniVersion: '1.0.0', name: 'net', type: 'bridge', ipam: { type: 'host-local' } };
const parse = (extra: Record<string, unknown>, args = '') => parseBridgeConfig({ config: { ...base, ...extra }, args, cniVersion: '1.0.0' });

const code = cniCode;

test('defaults follow the reference; isDefaultGateway implies isGateway', () => {
  const c = parse({});
  assert.equal(c.bridge, 'cni0');
  assert.equal(c.isGateway, false);
  assert.equal(c.mtu, 0);
  assert.equal(parse({ isDefaultGateway: true }).isGateway, true);
});

test('invalid values are code 7 naming the field; unsupported keys are code 2', () => {
  assert.equal(code(() => parse({ mtu: -1 })), 7);
  assert.equal(code(() => parse({ mtu: 10 })), 7);
  assert.equal(code(() => parse({ bridge: 'this-name-is-too-long' })), 7);
  assert.equal(code(() => parse({ hairpinMode: true, promiscMode: true })), 7);
  assert.equal(parse({ ipMasqBackend: 'iptables' }).ipMasq, false); // accepted: weft masquerades with nftables either way
  assert.equal(code(() => parse({ vlanTrunk: [{ id: 5 }] })), 2);
});

test('weftMasqExempt: CIDRs of either family, host bits cleared; anything else is code 7; default none', () => {
  assert.deepEqual(parse({}).masqExempt, []);
  assert.deepEqual(parse({ weftMasqExempt: ['10.244.0.0/16', '10.1.2.3/8', 'fd00:1::5/56'] }).masqExempt, ['10.244.0.0/16', '10.0.0.0/8', 'fd00:1::/56']);
  assert.equal(code(() => parse({ weftMasqExempt: ['10.244.0.0'] })), 7);
  assert.equal(code(() => parse({ weftMasqExempt: '10.244.0.0/16' })), 7);
  assert.equal(code(() => parse({ weftMasqExempt: [16] })), 7);
  assert.notEqual(masqNames('a').exempt4, masqNames('a').nets4);
});

test('MAC: CNI_ARGS, then args.cni.mac, then runtimeConfig.mac; multicast refused', () => {
  assert.equal(parse({}, 'MAC=02:00:00:00:00:01').mac, '02:00:00:00:00:01');
  assert.equal(parse({ args: { cni: { mac: '02:00:00:00:00:02' } } }, 'MAC=02:00:00:00:00:01').mac, '02:00:00:00:00:02');
  assert.equal(parse({ runtimeConfig: { mac: '02:00:00:00:00:03' }, args: { cni: { mac: '02:00:00:00:00:02' } } }).mac, '02:00:00:00:00:03');
  assert.equal(code(() => parse({ runtimeConfig: { mac: '01:00:5e:00:00:01' } })), 7);
});

test('names: stable hashes, comments within nft limits (host veth names: test/unit/lib/attach)', () => {
  assert.equal(fnv1a32(''), '811c9dc5');
  assert.equal(masqNames('Net.A').chain, 'bridge-masq-e8f65899'); // pinned: a changed hash would orphan existing chains
  assert.notEqual(masqNames('a').pods4, masqNames('b').pods4);
  assert.equal(elementComment('ctr1', 'eth0'), 'ctr1/eth0');
  assert.match(elementComment('x'.repeat(200), 'eth0'), /^h:[0-9a-f]{8}$/);
});

test('address helpers: subnet and broadcast', () => {
  assert.equal(subnetOf('10.88.3.7/16'), '10.88.0.0/16');
  assert.equal(subnetOf('10.88.3.7/32'), '10.88.3.7/32');
  assert.equal(broadcastOf('10.88.3.7/24'), '10.88.3.255');
  assert.equal(broadcastOf('10.88.3.7/31'), undefined);
  assert.equal(broadcastOf('fd00::1/64'), undefined);
});

test('GC reads cni.dev/valid-attachments with Go-style keys (ContainerID, IfName)', () => {
  const doc = normalizeKeys({ 'CNI.DEV/VALID-ATTACHMENTS': [{ ContainerID: 'c1', IfName: 'eth0' }] }, bridgeValidate.fields);
  assert.deepEqual(parseValidAttachments(doc), [{ containerId: 'c1', ifName: 'eth0' }]);
  assert.throws(() => parseValidAttachments(normalizeKeys({}, bridgeValidate.fields)), /valid-attachments/);
});

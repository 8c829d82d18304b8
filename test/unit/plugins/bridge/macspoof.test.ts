// macspoofchk without root: config acceptance, per-network names, and the element keys in the bytes
// nft itself writes (golden bytes taken from `nft --debug=netlink` on nft 1.0.6 for the same element).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NftError } from '../../../../lib/netfilter/errors.ts';
import { parseKeyBytes } from '../../../../lib/netfilter/nfnl/key-codec.ts';
import { parseBridgeConfig } from '../../../../plugins/bridge/config.ts';
import { macSpoofKeys } from '../../../../plugins/bridge/macspoof.ts';
import { macSpoofNames, masqNames } from '../../../../plugins/bridge/names.ts';

const base = { cniVersion: '1.0.0', name: 'net', type: 'bridge', ipam: { type: 'host-local' } };

test('macspoofchk is accepted (no longer code 2) and defaults to false', () => {
  const parse = (extra: Record<string, unknown>) => parseBridgeConfig({ config: { ...base, ...extra }, args: '', cniVersion: '1.0.0' });
  assert.equal(parse({ macspoofchk: true }).macSpoofChk, true);
  assert.equal(parse({}).macSpoofChk, false);
});

test('names: one chain and two sets per network, distinct from the masquerade names', () => {
  const a = macSpoofNames('Net.A');
  assert.deepEqual(a, macSpoofNames('Net.A'));
  assert.notEqual(a.ports, macSpoofNames('b').ports);
  assert.match(a.chain, /^bridge-macspoof-[0-9a-f]{8}$/);
  assert.ok(!Object.values(masqNames('Net.A')).includes(a.pairs));
});

test('keys: ifname NUL-padded to 16 bytes; ifname . ether_addr is 16 + 8 bytes (MAC padded to 4-byte registers)', () => {
  const k = macSpoofKeys('vethab', '02:00:00:00:00:01');
  const name = [0x76, 0x65, 0x74, 0x68, 0x61, 0x62, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
  assert.deepEqual([...k.port], name);
  assert.deepEqual([...k.pair], [...name, 0x02, 0, 0, 0, 0, 0x01, 0, 0]);
  assert.deepEqual(parseKeyBytes(['ifname', 'ether_addr'], k.pair), ['vethab', '02:00:00:00:00:01']);
  assert.deepEqual(parseKeyBytes('ifname', macSpoofKeys('veth0123abcd', '02:00:00:00:00:01').port), ['veth0123abcd']);
  assert.deepEqual([...macSpoofKeys('a', 'AA:BB:CC:DD:EE:0F').pair.subarray(16)], [0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x0f, 0, 0]);
});

test('keys: names the kernel would refuse are refused before anything is sent', () => {
  for (const bad of ['', 'x'.repeat(16), 'a/b', 'a b', 'a:b', '.', '..']) {
    assert.throws(() => macSpoofKeys(bad, '02:00:00:00:00:01'), NftError, bad);
  }
  assert.throws(() => macSpoofKeys('veth0', '02:00:00:00:00'), NftError);
});

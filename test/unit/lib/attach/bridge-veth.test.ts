// The bridge's host-veth naming contract: the names and aliases the plugin gives host veths are
// the ones weft doctor recognises as live attachments. Pure.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { attachmentAlias, attachmentPartOf, hostVethName, isAttachmentAlias, isHostVethName, isLive, liveAttachments, vethAttachmentPart, vethNetworkPrefix } from '../../../../lib/attach/bridge-veth.ts';
import { fnv1a32 } from '../../../../lib/hash/fnv.ts';

test('host veth names: network prefix + attachment part, 15 bytes, pinned', () => {
  assert.equal(hostVethName('net', 'ctr1', 'eth0'), 'w25999105102965'); // a changed name would orphan the veths of running pods
  assert.equal(hostVethName('net', 'ctr1', 'eth0'), `${vethNetworkPrefix('net')}${fnv1a32('ctr1/eth0')}`);
  assert.notEqual(hostVethName('net', 'ctr1', 'eth0'), hostVethName('net', 'ctr2', 'eth0'));
  assert.notEqual(vethNetworkPrefix('a'), vethNetworkPrefix('b'));
  assert.ok(isHostVethName(hostVethName('Net.A', 'x'.repeat(300), 'net1')));
  assert.ok(!isHostVethName('veth0123abcd'));
  assert.equal(attachmentPartOf(hostVethName('any', 'ctr1', 'eth0')), vethAttachmentPart('ctr1', 'eth0'));
  assert.equal(attachmentPartOf('eth0'), null);
});

test('aliases: plain up to 200 bytes, hashed beyond; recognised as ours', () => {
  assert.equal(attachmentAlias('ctr1', 'eth0'), 'weft:ctr1/eth0');
  const long = attachmentAlias('c'.repeat(250), 'eth0');
  assert.equal(long, `weft:h${fnv1a32(`${'c'.repeat(250)}/eth0`)}`);
  assert.ok(isAttachmentAlias(long) && isAttachmentAlias(attachmentAlias('a', 'b')));
  assert.ok(!isAttachmentAlias('eth0 uplink') && !isAttachmentAlias(undefined));
});

test('what the plugin names is what doctor finds live: by name, by alias, long IDs too', () => {
  const long = 'f'.repeat(250);
  const byName = liveAttachments([{ name: hostVethName('weft', 'c1', 'eth0') }, { name: hostVethName('other', long, 'net1') }]);
  assert.ok(isLive(byName, 'c1', 'eth0'));
  assert.ok(isLive(byName, long, 'net1'), 'a veth of another network counts as well');
  assert.ok(!isLive(byName, 'c1', 'net1'));
  // A randomly named veth (a reference-named pair) found by its alias only.
  const byAlias = liveAttachments([{ name: 'veth1234abcd', alias: attachmentAlias('c2', 'eth0') }, { name: 'vethx', alias: attachmentAlias(long, 'eth0') }]);
  assert.ok(isLive(byAlias, 'c2', 'eth0'));
  assert.ok(isLive(byAlias, long, 'eth0'));
  assert.ok(!isLive(byAlias, 'c3', 'eth0'));
  assert.ok(!isLive(liveAttachments([{ name: 'eth0', alias: 'uplink' }]), 'c1', 'eth0'));
});

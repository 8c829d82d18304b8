// Who is left on the bridge's old subnet, from host-local's files (every network's directory; the
// ADD's own container skipped), and the message that names them. No root: temp dirs and a fake rtnl.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parseCidr } from '../../../../lib/ip/index.ts';
import type { Rtnl } from '../../../../lib/netlink/rtnl.ts';
import { assertOldSubnetEmpty, hostLocalHolders } from '../../../../plugins/bridge/subnet-move.ts';

const dir = mkdtempSync(join(tmpdir(), 'weft-subnet-move-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const old = parseCidr('10.244.1.1/24');
assert.ok(old);

/** A fake rtnl whose only links are `ports` (name, master index). */
function fakeRtnl(ports: Array<[string, number, number]>): Rtnl {
  return { listLinks: () => ports.map(([name, index, master]) => ({ name, index, master })) } as unknown as Rtnl;
}

describe('hostLocalHolders', () => {
  test('addresses inside the old subnet in any network directory; not the new subnet, not foreign files, not our own container', () => {
    for (const n of ['weft', 'other']) mkdirSync(join(dir, n), { recursive: true });
    writeFileSync(join(dir, 'weft', '10.244.1.5'), 'c-old\r\neth0');
    writeFileSync(join(dir, 'weft', '10.244.7.2'), 'c-new\r\neth0');
    writeFileSync(join(dir, 'weft', 'last_reserved_ip.0'), '10.244.1.5');
    writeFileSync(join(dir, 'weft', 'lock'), '');
    writeFileSync(join(dir, 'other', '10.244.1.9'), 'c-other\r\nnet1');
    writeFileSync(join(dir, 'weft', '10.244.1.6'), 'c-self\r\neth0');
    const got = hostLocalHolders(dir, old, 'c-self').sort((a, b) => a.what.localeCompare(b.what));
    assert.deepEqual(got, [
      { what: '10.244.1.5', containerId: 'c-old', ifName: 'eth0' },
      { what: '10.244.1.9', containerId: 'c-other', ifName: 'net1' },
    ]);
    assert.deepEqual(hostLocalHolders(join(dir, 'absent'), old, 'x'), [], 'no dataDir: nothing allocated');
  });
});

describe('assertOldSubnetEmpty', () => {
  test('host-local: names the holders, keeps the reference phrase, says what to do', () => {
    const ctx = { ipam: { type: 'host-local', dataDir: dir }, containerId: 'c-self', ownPortIndex: 9 };
    assert.throws(() => assertOldSubnetEmpty(fakeRtnl([]), 3, 'cni0', '10.244.1.1/24', '10.244.7.1/24', ctx), (e: unknown) => {
      const err = e as { code: number; msg: string; details: string };
      assert.equal(err.code, 110);
      assert.match(err.msg, /^bridge cni0 already has an IP address different from 10\.244\.7\.1\/24: it has 10\.244\.1\.1\/24 from the node's previous subnet, and 2 pod address\(es\)/);
      assert.match(err.details, /10\.244\.1\.5 \(container c-old eth0\)/);
      assert.match(err.details, /next ADD moves cni0 to 10\.244\.7\.1\/24; forceAddress: true/);
      return true;
    });
    // Ports do not matter with host-local: a concurrent pod on the new subnet is a port too.
    assert.doesNotThrow(() => assertOldSubnetEmpty(fakeRtnl([['vethx', 5, 3]]), 3, 'cni0', '10.244.2.1/24', '10.244.7.1/24', ctx));
  });

  test('without host-local: any other bridge port blocks the move; our own veth and other bridges\' ports do not', () => {
    const ctx = { ipam: { type: 'dhcp' }, containerId: 'c-self', ownPortIndex: 9 };
    assert.doesNotThrow(() => assertOldSubnetEmpty(fakeRtnl([['vethself', 9, 3], ['vethelse', 10, 4]]), 3, 'cni0', '10.244.1.1/24', '10.244.7.1/24', ctx));
    assert.throws(() => assertOldSubnetEmpty(fakeRtnl([['vethself', 9, 3], ['veth1234', 11, 3]]), 3, 'cni0', '10.244.1.1/24', '10.244.7.1/24', ctx),
      (e: unknown) => /port\(s\) besides this pod/.test((e as { msg: string }).msg) && /^veth1234\./.test((e as { details: string }).details));
  });
});

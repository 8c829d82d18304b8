// Container ID, interface name and network name validation, including path tricks.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CniError } from '../../../../lib/cni/errors.ts';
import { validateContainerId, validateIfName, validateNetworkName } from '../../../../lib/cni/ids.ts';
import { readCmdEnv } from '../../../../lib/cni/cmd-env.ts';

const code = (c: number) => (e: unknown) => e instanceof CniError && e.code === c;

describe('validateContainerId', () => {
  for (const id of ['a', 'c0ffee', 'A.b_c-d', '0'.repeat(64), 'x'.repeat(1024)]) {
    it(`accepts ${id.slice(0, 20)} (${id.length})`, () => assert.equal(validateContainerId(id), id));
  }
  for (const id of ['', '../x', 'a/b', '.hidden', '-x', '_x', 'a b', 'a\0b', 'a\nb', 'é', 'x'.repeat(1025), undefined]) {
    it(`rejects ${JSON.stringify(id)?.slice(0, 24)}`, () => {
      assert.throws(() => validateContainerId(id), code(4));
      assert.throws(() => validateContainerId(id, { source: 'config' }), code(7));
    });
  }
  it('names the field', () => {
    assert.throws(() => validateContainerId('a/b'), (e: unknown) => e instanceof CniError && /CNI_CONTAINERID/.test(e.msg) && /"a\/b"/.test(e.details));
  });
});

describe('validateIfName', () => {
  for (const n of ['eth0', 'a', 'x'.repeat(15), 'net1.100', 'vlan-é']) {
    it(`accepts ${n}`, () => assert.equal(validateIfName(n), n));
  }
  for (const n of ['', '.', '..', 'x'.repeat(16), 'é'.repeat(8), 'eth/0', 'eth:0', 'eth 0', 'eth\t0', 'a\0', 'a\x7f', undefined]) {
    it(`rejects ${JSON.stringify(n)}`, () => {
      assert.throws(() => validateIfName(n), code(4));
      assert.throws(() => validateIfName(n, { source: 'config', field: 'args.ifname' }), (e: unknown) => e instanceof CniError && e.code === 7 && /args\.ifname/.test(e.msg));
    });
  }
});

describe('validateNetworkName', () => {
  for (const n of ['cbr0', 'my-net.v2', 'a..b', 'x'.repeat(255)]) {
    it(`accepts ${n.slice(0, 20)}`, () => assert.equal(validateNetworkName(n), n));
  }
  for (const n of ['', '.', '..', '../x', 'a/b', '/abs', 'a\0b', 'x'.repeat(300), ' net']) {
    it(`rejects ${JSON.stringify(n).slice(0, 24)} with 7`, () => assert.throws(() => validateNetworkName(n), code(7)));
  }
  it('uses code 4 for env values', () => assert.throws(() => validateNetworkName('../x', { source: 'env' }), code(4)));
});

it('readCmdEnv checks each new CNI_CONTAINERID and CNI_IFNAME, however often the last good ones come back', () => {
  const env = (id: string, ifName: string) => ({ CNI_CONTAINERID: id, CNI_NETNS: '/var/run/netns/x', CNI_IFNAME: ifName, CNI_PATH: '/opt/cni/bin' });
  for (let i = 0; i < 3; i++) assert.equal(readCmdEnv('ADD', env('c1', 'eth0')).ifName, 'eth0');
  assert.throws(() => readCmdEnv('ADD', env('c1', 'eth 0')), (e: unknown) => e instanceof CniError && e.code === 4);
  assert.throws(() => readCmdEnv('ADD', env('-c1', 'eth0')), (e: unknown) => e instanceof CniError && e.code === 4);
  assert.equal(readCmdEnv('ADD', env('c1', 'eth0')).containerId, 'c1');
  assert.throws(() => readCmdEnv('ADD', env('c1', 'a/b')), (e: unknown) => e instanceof CniError && e.code === 4);
});

// Sysctl names are validated before they become /proc/sys paths; reads need no root.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readSysctl, validateSysctlName, writeSysctl } from '../../../../lib/netns/index.ts';

describe('validateSysctlName', () => {
  for (const ok of ['net/ipv4/ip_forward', 'net/ipv4/conf/flannel.1/rp_filter', 'net/ipv6/conf/veth-ab12/accept_dad', 'net/core/somaxconn']) {
    test(`accepts ${ok}`, () => assert.equal(validateSysctlName(ok), `/proc/sys/${ok}`));
  }
  for (const bad of ['', 'net', 'net/', 'kernel/hostname', '/net/ipv4/ip_forward', 'net/ipv4/../../kernel/x', 'net/./ipv4', 'net//ipv4', 'net/ipv4/ip forward', 'net/ipv4/ip_forward\n', 'net.ipv4.ip_forward', 'net/ipv4/conf/a:b/x']) {
    test(`refuses ${JSON.stringify(bad)}`, () => {
      assert.throws(() => validateSysctlName(bad), (e: unknown) => e instanceof TypeError && e.message.includes(JSON.stringify(bad)));
    });
  }
  test('readSysctl and writeSysctl validate before touching /proc', () => {
    assert.throws(() => readSysctl('net/../kernel/hostname'), TypeError);
    assert.throws(() => writeSysctl('kernel/hostname', 'x'), TypeError);
  });
  test('readSysctl strips the trailing newline', () => {
    assert.match(readSysctl('net/ipv4/ip_forward'), /^[01]$/);
  });
});

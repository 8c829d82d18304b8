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
  test('accepts exactly what /^net(\\/[^/:\\s\\x00-\\x1f\\x7f]+)+$/ without lone surrogates or dot segments accepts', () => {
    // eslint-disable-next-line no-control-regex
    const NAME = /^net(\/[^/:\s\x00-\x1f\x7f]+)+$/;
    const parts = ['net', '/', 'ipv4', ':', ' ', '\u3000', '.', '..', 'x', '\ud800', '\udc00', '\t', 'é', ''];
    let seed = 11;
    for (let n = 0; n < 3000; n++) {
      let name = n % 3 === 0 ? '' : 'net/';
      for (let i = 0; i < n % 6; i++) {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        name += parts[seed % parts.length] ?? '';
      }
      const want = NAME.test(name) && !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(name) && !name.split('/').some((seg) => seg === '.' || seg === '..');
      let got = true;
      try {
        validateSysctlName(name);
      } catch {
        got = false;
      }
      assert.equal(got, want, JSON.stringify(name));
    }
  });
  test('readSysctl and writeSysctl validate before touching /proc', () => {
    assert.throws(() => readSysctl('net/../kernel/hostname'), TypeError);
    assert.throws(() => writeSysctl('kernel/hostname', 'x'), TypeError);
  });
  test('readSysctl strips the trailing newline', () => {
    assert.match(readSysctl('net/ipv4/ip_forward'), /^[01]$/);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cniCode } from '../../lib/cni/helpers.ts';
import { checkAllowlist, parseSysctls, sysctlName } from '../../../../plugins/tuning/sysctl-keys.ts';

const code = cniCode;

describe('tuning sysctl keys', () => {
  it('dots separate unless the key has a slash (then dots stay, e.g. VLAN devices)', () => {
    assert.equal(sysctlName('net.ipv4.conf.eth0.arp_notify', 'eth0'), 'net/ipv4/conf/eth0/arp_notify');
    assert.equal(sysctlName('net/ipv4/conf/eth0.100/rp_filter', 'eth0'), 'net/ipv4/conf/eth0.100/rp_filter');
  });

  it('replaces the first IFNAME with the pod interface, as the reference', () => {
    assert.equal(sysctlName('net.ipv6.conf.IFNAME.accept_dad', 'net1'), 'net/ipv6/conf/net1/accept_dad');
  });

  const bad = [
    'kernel.hostname', 'net', 'net/../kernel/hostname', 'net.ipv4..conf', 'net.ipv4.conf.eth0/../../../../kernel/hostname',
    'net/ipv4/conf/../../../proc/sys/kernel/hostname', 'net/ipv4/conf/eth 0/rp_filter', 'net/ipv4/conf/eth0:1/x', '/net/ipv4/ip_forward',
    'net/./ipv4/ip_forward', 'net/ipv4/\u0000/x', 'Net.ipv4.ip_forward',
  ];
  for (const key of bad) {
    it(`refuses ${JSON.stringify(key)} with code 7`, () => assert.equal(code(() => parseSysctls({ [key]: '1' }, 'eth0')), 7));
  }

  it('accepts plain net.* keys and keeps key, name and value', () => {
    assert.deepEqual(parseSysctls({ 'net.ipv4.conf.IFNAME.arp_notify': '1' }, 'eth0'), [{ key: 'net.ipv4.conf.IFNAME.arp_notify', name: 'net/ipv4/conf/eth0/arp_notify', value: '1' }]);
  });

  it('a NUL in a value is refused', () => assert.equal(code(() => parseSysctls({ 'net.ipv4.ip_forward': '1\u0000' }, 'eth0')), 7));

  it('allowlist: no file allows all; with lines every key must match one (searched anywhere)', () => {
    assert.doesNotThrow(() => checkAllowlist(['net.ipv4.ip_forward'], null));
    assert.doesNotThrow(() => checkAllowlist(['net.ipv4.conf.IFNAME.arp_notify'], ['', '^net\\.ipv4\\.conf\\.IFNAME\\.[a-z_]*$']));
    assert.equal(code(() => checkAllowlist(['net.core.somaxconn'], ['^net\\.ipv4\\.'])), 7);
    assert.equal(code(() => checkAllowlist(['net.core.somaxconn'], ['('])), 7);
  });
});

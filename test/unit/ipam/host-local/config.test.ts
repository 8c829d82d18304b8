// Unit tests for ipam/host-local/config.ts and resolv-conf.ts: reference semantics and error codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CniError } from '../../../../lib/cni/errors.ts';
import { formatIp } from '../../../../lib/ip/index.ts';
import { parseHostLocalConfig } from '../../../../ipam/host-local/config.ts';
import { formatRangeSet } from '../../../../ipam/host-local/range.ts';
import { parseResolvConf } from '../../../../ipam/host-local/resolv-conf.ts';

function conf(ipam: Record<string, unknown>, extra: Record<string, unknown> = {}, cniVersion = '1.0.0'): unknown {
  return { cniVersion, name: 'net', type: 'bridge', ...extra, ipam: { type: 'host-local', ...ipam } };
}

function errorOf(fn: () => unknown): CniError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof CniError, String(e));
    return e;
  }
  assert.fail('did not throw');
}

void test('range-set order: runtimeConfig.ipRanges, legacy range, ipam.ranges', () => {
  const c = parseHostLocalConfig(
    conf({ subnet: '10.1.0.0/24', ranges: [[{ subnet: 'fd00::/64' }]] }, { runtimeConfig: { ipRanges: [[{ subnet: '10.2.0.0/24' }]] } }),
  );
  assert.deepEqual(c.rangeSets.map(formatRangeSet), ['10.2.0.1-10.2.0.254', '10.1.0.1-10.1.0.254', 'fd00::1-fd00::ffff:ffff:ffff:ffff']);
  assert.equal(c.dataDir, '/var/lib/cni/networks');
  assert.equal(c.resolvConf, null);
});

void test('requested addresses: IP= first, then args.cni.ips, then runtimeConfig.ips; mapped and CIDR forms', () => {
  const c = parseHostLocalConfig(
    conf({ subnet: '10.1.0.0/24' }, { args: { cni: { ips: ['10.1.0.7/24'] } }, runtimeConfig: { ips: ['::ffff:10.1.0.8'] } }),
    'IP=10.1.0.6;IgnoreUnknown=1;FOO=bar',
  );
  assert.deepEqual(c.requestedIps.map(formatIp), ['10.1.0.6', '10.1.0.7', '10.1.0.8']);
});

void test('routes keep host bits and print mapped destinations as IPv4, like the reference', () => {
  const c = parseHostLocalConfig(conf({ subnet: '10.1.0.0/24', routes: [{ dst: '10.9.9.9/8', gw: 'fd00:0::5' }, { dst: '::ffff:1.2.3.4/128' }] }));
  assert.deepEqual(c.routes, [{ dst: '10.9.9.9/8', gw: 'fd00::5' }, { dst: '1.2.3.4/32' }]);
});

void test('config errors are code 7 and name the field and the value', () => {
  const cases: Array<[unknown, RegExp]> = [
    [conf({}), /no IP ranges specified/],
    [conf({ ranges: [[]] }), /invalid range set 0: empty range set/],
    [conf({ subnet: '10.1.0.5/24' }), /ipam\.subnet|ipam .*host bits/],
    [conf({ ranges: [[{ subnet: 'nope' }]] }), /ipam\.ranges\[0\]\[0\]\.subnet is not a CIDR/],
    [conf({ ranges: [[{ subnet: '10.1.0.0/24', rangeStart: '10.2.0.1' }]] }), /rangeStart 10\.2\.0\.1 is not in subnet/],
    [conf({ ranges: [[{ subnet: '::ffff:10.0.0.0/120' }]] }), /IPv4-mapped/],
    [conf({ ranges: [[{ subnet: '10.1.0.0/16' }], [{ subnet: '10.1.2.0/24' }]] }), /range set 0 overlaps with 1/],
    [conf({ ranges: [[{ subnet: '10.1.0.0/24' }], [{ subnet: '10.2.0.0/24' }]] }, {}, '0.2.0'), /does not support more than 1 address per family/],
    [conf({ subnet: '10.1.0.0/24' }, { runtimeConfig: { ips: ['10.1.0.300'] } }), /runtimeConfig\.ips\[0\]/],
    [conf({ subnet: 10 }), /ipam\.subnet/],
    [{ cniVersion: '1.0.0', name: 'net', type: 'bridge' }, /ipam is required/],
    [conf({ subnet: '10.1.0.0/24' }, { name: '../x' }), /name/],
  ];
  for (const [c, re] of cases) {
    const e = errorOf(() => parseHostLocalConfig(c));
    assert.equal(e.code, 7, `${re}: ${e.message}`);
    assert.match(e.message, re);
  }
});

void test('CNI_ARGS errors are code 4 (unknown key without IgnoreUnknown, bad IP, a list)', () => {
  for (const args of ['FOO=bar', 'IP=10.1.0.300', 'IP=10.1.0.2,10.1.0.3']) {
    assert.equal(errorOf(() => parseHostLocalConfig(conf({ subnet: '10.1.0.0/24' }), args)).code, 4, args);
  }
  assert.equal(parseHostLocalConfig(conf({ subnet: '10.1.0.0/24' }), 'K8S_POD_NAME=x').requestedIps.length, 0);
});

void test('GC input: cni.dev/valid-attachments', () => {
  const c = parseHostLocalConfig(conf({ subnet: '10.1.0.0/24' }, { 'cni.dev/valid-attachments': [{ containerID: 'a', ifname: 'eth0' }] }));
  assert.deepEqual(c.validAttachments, [{ containerId: 'a', ifname: 'eth0' }]);
  assert.equal(parseHostLocalConfig(conf({ subnet: '10.1.0.0/24' })).validAttachments, null);
});

void test('resolv.conf parsing', () => {
  const dns = parseResolvConf('# c\nnameserver 1.1.1.1\nnameserver fd00::53\n; x\ndomain example.com\nsearch a b\nsearch c d\noptions ndots:5\noptions rotate\n');
  assert.deepEqual(dns, { nameservers: ['1.1.1.1', 'fd00::53'], domain: 'example.com', search: ['c', 'd'], options: ['ndots:5', 'rotate'] });
  assert.deepEqual(parseResolvConf(''), {});
});

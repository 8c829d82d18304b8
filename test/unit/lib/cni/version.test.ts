// Result conversion tables: internal (1.1.0) -> every version, and every version -> internal.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareVersions, formatResult, parseResult, versionAtLeast, isSupportedVersion } from '../../../../lib/cni/version.ts';
import { CniError } from '../../../../lib/cni/errors.ts';
import { SUPPORTED_VERSIONS } from '../../../../lib/cni/types.ts';
import type { Result } from '../../../../lib/cni/types.ts';
import { FULL_RESULT } from './helpers.ts';

const IFACES_10 = [
  { name: 'cni0', mac: '0a:58:0a:f4:01:01' },
  { name: 'veth1234abcd', mac: '12:34:56:78:9a:bc' },
  { name: 'eth0', mac: '0a:58:0a:f4:01:05', sandbox: '/var/run/netns/pod' },
];
const IPS_10 = [
  { address: '10.244.1.5/24', gateway: '10.244.1.1', interface: 2 },
  { address: 'fd00::5/64', gateway: 'fd00::1', interface: 2 },
  { address: '10.9.9.9/32', interface: 2 },
];
const ROUTES_10 = [{ dst: '0.0.0.0/0', gw: '10.244.1.1' }, { dst: '::/0', gw: 'fd00::1' }, { dst: '10.244.0.0/16' }];
const DNS = { nameservers: ['10.96.0.10'], domain: 'cluster.local', search: ['svc.cluster.local'], options: ['ndots:5'] };
const LEGACY = {
  ip4: { ip: '10.244.1.5/24', gateway: '10.244.1.1', routes: [{ dst: '0.0.0.0/0', gw: '10.244.1.1' }, { dst: '10.244.0.0/16' }] },
  ip6: { ip: 'fd00::5/64', gateway: 'fd00::1', routes: [{ dst: '::/0', gw: 'fd00::1' }] },
  dns: DNS,
};

const EXPECTED: Record<string, unknown> = {
  '0.1.0': { cniVersion: '0.1.0', ...LEGACY },
  '0.2.0': { cniVersion: '0.2.0', ...LEGACY },
  '0.3.0': { cniVersion: '0.3.0', interfaces: IFACES_10, ips: IPS_10.map((ip) => ({ version: ip.address.includes(':') ? '6' : '4', ...ip })), routes: ROUTES_10, dns: DNS },
  '0.3.1': { cniVersion: '0.3.1', interfaces: IFACES_10, ips: IPS_10.map((ip) => ({ version: ip.address.includes(':') ? '6' : '4', ...ip })), routes: ROUTES_10, dns: DNS },
  '0.4.0': { cniVersion: '0.4.0', interfaces: IFACES_10, ips: IPS_10.map((ip) => ({ version: ip.address.includes(':') ? '6' : '4', ...ip })), routes: ROUTES_10, dns: DNS },
  '1.0.0': { cniVersion: '1.0.0', interfaces: IFACES_10, ips: IPS_10, routes: ROUTES_10, dns: DNS },
  '1.1.0': { cniVersion: '1.1.0', ...FULL_RESULT },
};

describe('formatResult', () => {
  for (const v of SUPPORTED_VERSIONS) {
    it(`1.1.0 internal -> ${v}`, () => {
      assert.deepEqual(formatResult(FULL_RESULT, v), EXPECTED[v]);
    });
  }

  it('puts cniVersion first and does not mutate the input', () => {
    const before = JSON.stringify(FULL_RESULT);
    assert.match(JSON.stringify(formatResult(FULL_RESULT, '0.4.0')), /^\{"cniVersion":"0\.4\.0"/);
    assert.equal(JSON.stringify(FULL_RESULT), before);
  });

  it('omits an empty mac and keeps IPAM results without interfaces', () => {
    const r: Result = { interfaces: [{ name: 'lo', mac: '' }] };
    assert.deepEqual(formatResult(r, '1.1.0'), { cniVersion: '1.1.0', interfaces: [{ name: 'lo' }] });
    assert.deepEqual(formatResult({ ips: [{ address: '10.0.0.2/24' }] }, '1.0.0'), { cniVersion: '1.0.0', ips: [{ address: '10.0.0.2/24' }] });
  });

  it('0.2.0 drops routes of a family without an address', () => {
    assert.deepEqual(formatResult({ ips: [{ address: '10.0.0.2/24' }], routes: [{ dst: '::/0' }] }, '0.2.0'), {
      cniVersion: '0.2.0',
      ip4: { ip: '10.0.0.2/24' },
    });
  });

  it('refuses an unsupported version with code 1', () => {
    assert.throws(() => formatResult(FULL_RESULT, '2.0.0'), (e: unknown) => e instanceof CniError && e.code === 1);
  });
});

describe('parseResult', () => {
  const INTERNAL_10: Result = {
    interfaces: IFACES_10,
    ips: IPS_10,
    routes: ROUTES_10,
    dns: DNS,
  };
  const INTERNAL_LEGACY: Result = {
    ips: [{ address: '10.244.1.5/24', gateway: '10.244.1.1' }, { address: 'fd00::5/64', gateway: 'fd00::1' }],
    routes: [{ dst: '0.0.0.0/0', gw: '10.244.1.1' }, { dst: '10.244.0.0/16' }, { dst: '::/0', gw: 'fd00::1' }],
    dns: DNS,
  };
  for (const v of SUPPORTED_VERSIONS) {
    it(`${v} -> internal`, () => {
      const want = v === '1.1.0' ? FULL_RESULT : v < '0.3.0' ? INTERNAL_LEGACY : INTERNAL_10;
      assert.deepEqual(parseResult(EXPECTED[v]), want);
    });
  }

  it('round-trips 1.1.0', () => {
    assert.deepEqual(parseResult(formatResult(FULL_RESULT, '1.1.0')), FULL_RESULT);
  });

  it('drops 1.1-only fields from an older document', () => {
    const r = parseResult({ cniVersion: '1.0.0', routes: [{ dst: '0.0.0.0/0', mtu: 1400 }] });
    assert.deepEqual(r, { routes: [{ dst: '0.0.0.0/0' }] });
  });

  it('uses the fallback version when the document has none', () => {
    assert.deepEqual(parseResult({ ip4: { ip: '10.0.0.2/24' } }, '0.2.0'), { ips: [{ address: '10.0.0.2/24' }] });
  });

  const bad: [string, unknown, number, RegExp][] = [
    ['not an object', 'x', 6, /result/],
    ['no version at all', { ips: [] }, 6, /cniVersion/],
    ['unknown version', { cniVersion: '7.0.0' }, 1, /7\.0\.0/],
    ['address not a string', { cniVersion: '1.0.0', ips: [{ address: 1 }] }, 6, /ips\[0\]\.address/],
    ['address without prefix', { cniVersion: '1.0.0', ips: [{ address: '10.0.0.1' }] }, 6, /CIDR/],
    ['interface index out of range', { cniVersion: '1.0.0', interfaces: [], ips: [{ address: '10.0.0.1/8', interface: 0 }] }, 6, /interface/],
    ['bad ip version', { cniVersion: '0.4.0', ips: [{ address: '10.0.0.1/8', version: 4 }] }, 6, /version/],
    ['route without dst', { cniVersion: '1.1.0', routes: [{ gw: '10.0.0.1' }] }, 6, /routes\[0\]\.dst/],
    ['route mtu not an integer', { cniVersion: '1.1.0', routes: [{ dst: '0.0.0.0/0', mtu: '1400' }] }, 6, /mtu/],
    ['dns not an object', { cniVersion: '1.1.0', dns: [] }, 6, /dns/],
    ['ip4 not an object', { cniVersion: '0.2.0', ip4: 'x' }, 6, /ip4/],
  ];
  for (const [name, doc, code, re] of bad) {
    it(`rejects ${name} with ${code}`, () => {
      assert.throws(() => parseResult(doc), (e: unknown) => e instanceof CniError && e.code === code && re.test(`${e.msg} ${e.details}`));
    });
  }
});

describe('version helpers', () => {
  it('compares numerically', () => {
    assert.ok(compareVersions('0.10.0', '0.4.0') > 0);
    assert.equal(compareVersions('1.1.0', '1.1.0'), 0);
    assert.ok(compareVersions('0.3.1', '0.4.0') < 0);
    assert.ok(versionAtLeast('1.1.0', '1.0.0'));
    assert.ok(!versionAtLeast('0.3.1', '0.4.0'));
    assert.throws(() => compareVersions('1.0', '1.0.0'), (e: unknown) => e instanceof CniError && e.code === 1);
  });

  it('knows the supported set', () => {
    assert.ok(isSupportedVersion('0.3.1'));
    assert.ok(!isSupportedVersion('0.3.2'));
    assert.ok(!isSupportedVersion(1));
    assert.ok(!isSupportedVersion('0.3.1', ['1.0.0']));
  });
});

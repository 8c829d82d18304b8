// net-conf.json parsing: flannel's defaults and limits, and errors that name the key and the value.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hasIPv6, parseNetConf, normalizeNetConf } from '../../../../agent/config/net-conf.ts';
import { NetConfError } from '../../../../agent/config/net-conf-error.ts';

function rejects(raw: unknown, key: string, pattern: RegExp): void {
  assert.throws(() => normalizeNetConf(raw), (err: unknown) => {
    assert.ok(err instanceof NetConfError, `expected NetConfError, got ${String(err)}`);
    assert.equal(err.key, key);
    assert.match(err.message, pattern);
    return true;
  });
}

void describe('parseNetConf defaults', () => {
  void it('fills flannel defaults for a /16 with vxlan', () => {
    const c = parseNetConf('{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan"}}');
    assert.deepEqual(c, {
      enableIPv4: true,
      enableIPv6: false,
      network: '10.244.0.0/16',
      subnetLen: 24,
      subnetMin: '10.244.1.0',
      subnetMax: '10.244.255.0',
      backend: { type: 'vxlan', vni: 1, port: 8472, directRouting: false, gbp: false, checksumOffload: 'auto' },
    });
  });

  void it('gives /24 up to a /22 and a quarter of smaller networks', () => {
    assert.equal(normalizeNetConf({ Network: '10.0.0.0/22' }).subnetLen, 24);
    assert.equal(normalizeNetConf({ Network: '10.0.0.0/23' }).subnetLen, 25);
    const c = normalizeNetConf({ Network: '10.0.0.0/28' });
    assert.equal(c.subnetLen, 30);
    assert.equal(c.subnetMin, '10.0.0.4');
    assert.equal(c.subnetMax, '10.0.0.12');
  });

  void it('defaults the backend to udp on 8285 when Backend is absent, and host-gw has no port', () => {
    assert.deepEqual(normalizeNetConf({ Network: '10.1.0.0/16' }).backend, { type: 'udp', vni: 1, port: 8285, directRouting: false, gbp: false, checksumOffload: 'auto' });
    assert.equal(normalizeNetConf({ Network: '10.1.0.0/16', Backend: { Type: 'host-gw' } }).backend.port, 0);
  });

  void it('keeps explicit values and matches keys case-insensitively like Go', () => {
    const c = normalizeNetConf({
      network: '10.5.0.0/16', Subnetlen: 26, SubnetMin: '10.5.1.0', subnetmax: '10.5.2.192',
      backend: { type: 'vxlan', vni: 42, Port: 4789, MTU: 1400, DirectRouting: true },
    });
    assert.equal(c.subnetLen, 26);
    assert.equal(c.subnetMin, '10.5.1.0');
    assert.equal(c.subnetMax, '10.5.2.192');
    assert.deepEqual(c.backend, { type: 'vxlan', vni: 42, port: 4789, mtu: 1400, directRouting: true, gbp: false, checksumOffload: 'auto' });
  });

  void it('decodes Backend.ChecksumOffload: auto by default; key and value case-insensitive; anything else refused', () => {
    const mode = (b: Record<string, unknown>) => normalizeNetConf({ Network: '10.5.0.0/16', Backend: { Type: 'vxlan', ...b } }).backend.checksumOffload;
    assert.equal(mode({}), 'auto');
    assert.equal(mode({ ChecksumOffload: 'off' }), 'off');
    assert.equal(mode({ checksumoffload: 'On' }), 'on');
    assert.equal(mode({ CHECKSUMOFFLOAD: 'AUTO' }), 'auto');
    rejects({ Network: '10.5.0.0/16', Backend: { Type: 'vxlan', ChecksumOffload: false } }, 'Backend.ChecksumOffload', /one of auto, off, on \(got false\)/);
    rejects({ Network: '10.5.0.0/16', Backend: { Type: 'vxlan', ChecksumOffload: 'disabled' } }, 'Backend.ChecksumOffload', /one of auto, off, on/);
  });

  void it('accepts bytes and ignores IPv6Network when EnableIPv6 is off', () => {
    const c = parseNetConf(Buffer.from('{"Network":"10.9.0.0/16","IPv6Network":"fd00::/48","EnableIPv6":false}'));
    assert.equal(c.network, '10.9.0.0/16');
    assert.equal(c.ipv6Network, undefined);
    assert.equal(hasIPv6(c), false);
  });
});

void describe('parseNetConf errors', () => {
  void it('rejects bad JSON', () => {
    assert.throws(() => parseNetConf('{"Network":'), /net-conf: \(document\): is not valid JSON/);
  });
  void it('rejects a missing or malformed Network', () => {
    rejects({}, 'Network', /is required/);
    rejects({ Network: 5 }, 'Network', /must be a string/);
    rejects({ Network: '10.244.0.0' }, 'Network', /not an IPv4 CIDR.*got "10.244.0.0"/);
    rejects({ Network: '10.244.1.0/16' }, 'Network', /host bits set; did you mean "10.244.0.0\/16"/);
    rejects({ Network: '10.0.0.0/29' }, 'Network', /too small.*\/28/);
  });
  void it('applies flannel SubnetLen limits', () => {
    rejects({ Network: '10.0.0.0/16', SubnetLen: 31 }, 'SubnetLen', /at most 30 \(got 31\)/);
    rejects({ Network: '10.0.0.0/16', SubnetLen: 17 }, 'SubnetLen', /at least 18.*four subnets/);
    rejects({ Network: '10.0.0.0/16', SubnetLen: '24' }, 'SubnetLen', /positive integer \(got "24"\)/);
    assert.equal(normalizeNetConf({ Network: '10.0.0.0/16', SubnetLen: 18 }).subnetLen, 18);
  });
  void it('checks SubnetMin/SubnetMax: inside Network, aligned, ordered', () => {
    rejects({ Network: '10.0.0.0/16', SubnetMin: '10.1.0.0' }, 'SubnetMin', /not inside Network 10.0.0.0\/16/);
    rejects({ Network: '10.0.0.0/16', SubnetMax: '10.0.3.7' }, 'SubnetMax', /not on a \/24 boundary/);
    rejects({ Network: '10.0.0.0/16', SubnetMin: 'ten' }, 'SubnetMin', /IPv4 address/);
    rejects({ Network: '10.0.0.0/16', SubnetMin: '10.0.9.0', SubnetMax: '10.0.8.0' }, 'SubnetMin', /above SubnetMax 10.0.8.0/);
  });
  void it('rejects bad family switches and bad backend values', () => {
    rejects({ Network: '10.0.0.0/16', EnableIPv6: 'true', IPv6Network: 'fd00::/48' }, 'EnableIPv6', /true or false \(got "true"\)/);
    rejects({ Network: '10.0.0.0/16', EnableIPv4: 0 }, 'EnableIPv4', /true or false/);
    rejects({ Network: '10.0.0.0/16', EnableIPv4: false }, 'EnableIPv4', /both false/);
    rejects({ Network: '10.0.0.0/16', Backend: { Type: 'wireguard' } }, 'Backend.Type', /one of vxlan, host-gw, udp \(got "wireguard"\)/);
    rejects({ Network: '10.0.0.0/16', Backend: {} }, 'Backend.Type', /got nothing/);
    rejects({ Network: '10.0.0.0/16', Backend: { Type: 'vxlan', VNI: -1 } }, 'Backend.VNI', /0 to 16777215/);
    rejects({ Network: '10.0.0.0/16', Backend: { Type: 'vxlan', Port: 70000 } }, 'Backend.Port', /0 to 65535/);
    rejects({ Network: '10.0.0.0/16', Backend: { Type: 'vxlan', MTU: 20 } }, 'Backend.MTU', /68 to 65535/);
    rejects({ Network: '10.0.0.0/16', Backend: { Type: 'host-gw', DirectRouting: true } }, 'Backend.DirectRouting', /only meaningful for vxlan/);
    rejects({ Network: '10.0.0.0/16', Backend: { Type: 'vxlan', DirectRouting: 'yes' } }, 'Backend.DirectRouting', /true or false/);
    rejects({ Network: '10.0.0.0/16', Backend: { Type: 'vxlan', GBP: true } }, 'Backend.GBP', /not supported/);
    rejects({ Network: '10.0.0.0/16', Backend: [] }, 'Backend', /must be an object/);
  });
});

// flannel's CheckNetworkConfig, IPv6 half (pkg/subnet/config.go): /64 per node up to a /62,
// a quarter of smaller networks, nothing smaller than a /124; IPv6SubnetLen at most 126.
void describe('parseNetConf IPv6 (EnableIPv6)', () => {
  void it('fills flannel defaults for a dual-stack /56', () => {
    const c = normalizeNetConf({ Network: '10.244.0.0/16', EnableIPv6: true, IPv6Network: 'fd00:10:244::/56', Backend: { Type: 'vxlan' } });
    assert.equal(c.enableIPv4, true);
    assert.equal(c.enableIPv6, true);
    assert.equal(c.network, '10.244.0.0/16');
    assert.equal(c.ipv6Network, 'fd00:10:244::/56');
    assert.equal(c.ipv6SubnetLen, 64);
    assert.equal(c.ipv6SubnetMin, 'fd00:10:244:1::');
    assert.equal(c.ipv6SubnetMax, 'fd00:10:244:ff::');
    assert.ok(hasIPv6(c));
  });

  void it('gives /64 up to a /62 and a quarter of smaller networks; a /124 is the smallest', () => {
    const len = (n: string) => normalizeNetConf({ Network: '10.0.0.0/16', EnableIPv6: true, IPv6Network: n }).ipv6SubnetLen;
    assert.equal(len('fd00::/48'), 64);
    assert.equal(len('fd00::/62'), 64);
    assert.equal(len('fd00::/63'), 65);
    assert.equal(len('fd00::/120'), 122);
    const c = normalizeNetConf({ Network: '10.0.0.0/16', EnableIPv6: true, IPv6Network: 'fd00::/124' });
    assert.equal(c.ipv6SubnetLen, 126);
    assert.equal(c.ipv6SubnetMin, 'fd00::4');
    assert.equal(c.ipv6SubnetMax, 'fd00::c');
    rejects({ Network: '10.0.0.0/16', EnableIPv6: true, IPv6Network: 'fd00::/125' }, 'IPv6Network', /too small.*\/124/);
  });

  void it('keeps explicit values, keys matched case-insensitively; "::" means unset as in flannel', () => {
    const c = normalizeNetConf({
      network: '10.0.0.0/16', enableipv6: true, ipv6network: 'FD00:0:0:0::/48', Ipv6SubnetLen: 80,
      IPv6SubnetMin: 'fd00::1:0:0:0', ipv6subnetmax: '::',
    });
    assert.equal(c.ipv6Network, 'fd00::/48');
    assert.equal(c.ipv6SubnetLen, 80);
    assert.equal(c.ipv6SubnetMin, 'fd00::1:0:0:0');
    assert.equal(c.ipv6SubnetMax, 'fd00:0:0:ffff:ffff::');
  });

  void it('allows IPv6-only (EnableIPv4 false) like flannel: the IPv4 fields stay empty and Network is not read', () => {
    const c = normalizeNetConf({ EnableIPv4: false, EnableIPv6: true, IPv6Network: 'fd00::/48', Network: 'garbage' });
    assert.equal(c.enableIPv4, false);
    assert.equal(c.network, '');
    assert.equal(c.subnetLen, 0);
    assert.equal(c.ipv6Network, 'fd00::/48');
  });

  void it('rejects bad IPv6 keys naming the key and the value', () => {
    const base = { Network: '10.0.0.0/16', EnableIPv6: true };
    rejects({ ...base }, 'IPv6Network', /required with EnableIPv6 .*\(got nothing\)/);
    rejects({ ...base, IPv6Network: 'fd00::1/48' }, 'IPv6Network', /host bits set; did you mean "fd00::\/48"\?/);
    rejects({ ...base, IPv6Network: '10.1.0.0/16' }, 'IPv6Network', /not an IPv6 CIDR/);
    rejects({ ...base, IPv6Network: 48 }, 'IPv6Network', /must be a string/);
    rejects({ ...base, IPv6Network: 'fd00::/48', IPv6SubnetLen: 127 }, 'IPv6SubnetLen', /at most 126 \(got 127\)/);
    rejects({ ...base, IPv6Network: 'fd00::/48', IPv6SubnetLen: 49 }, 'IPv6SubnetLen', /at least 50/);
    rejects({ ...base, IPv6Network: 'fd00::/48', IPv6SubnetLen: '64' }, 'IPv6SubnetLen', /positive integer/);
    rejects({ ...base, IPv6Network: 'fd00::/48', IPv6SubnetMin: 'fd01::' }, 'IPv6SubnetMin', /not inside IPv6Network fd00::\/48/);
    rejects({ ...base, IPv6Network: 'fd00::/48', IPv6SubnetMax: 'fd00:0:0:5::1' }, 'IPv6SubnetMax', /not on a \/64 boundary/);
    rejects({ ...base, IPv6Network: 'fd00::/48', IPv6SubnetMin: '10.0.0.1' }, 'IPv6SubnetMin', /IPv6 address/);
    rejects({ ...base, IPv6Network: 'fd00::/48', IPv6SubnetMin: 'fd00:0:0:9::', IPv6SubnetMax: 'fd00:0:0:8::' }, 'IPv6SubnetMin', /above IPv6SubnetMax fd00:0:0:8::/);
    rejects({ EnableIPv4: false, EnableIPv6: true, IPv6Network: 'fd00::/128' }, 'IPv6Network', /too small/);
  });
});

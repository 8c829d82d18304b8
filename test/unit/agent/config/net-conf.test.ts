// net-conf.json parsing: flannel's defaults and limits, and errors that name the key and the value.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseNetConf, normalizeNetConf } from '../../../../agent/config/net-conf.ts';
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
  void it('rejects unsupported families and bad backend values', () => {
    rejects({ Network: '10.0.0.0/16', EnableIPv6: true, IPv6Network: 'fd00::/48' }, 'EnableIPv6', /not supported/);
    rejects({ Network: '10.0.0.0/16', EnableIPv4: false }, 'EnableIPv4', /only IPv4/);
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

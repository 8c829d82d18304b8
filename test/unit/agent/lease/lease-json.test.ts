// flannel's lease key and JSON: exact bytes, tolerant parsing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatLeaseAttrs, formatSubnetKey, parseLeaseAttrs, parseLeaseKey, parseSubnetKey } from '../../../../agent/lease/lease-json.ts';
import { type Lease, sameLeaseData } from '../../../../agent/lease/store.ts';

void describe('lease-json', () => {
  void it('formats and parses keys', () => {
    assert.equal(formatSubnetKey('10.244.3.0/24'), '10.244.3.0-24');
    assert.equal(parseSubnetKey('10.244.3.0-24'), '10.244.3.0/24');
    assert.equal(parseSubnetKey('10.244.3.0-24&fd00:0:0:3::-64'), '10.244.3.0/24');
    for (const bad of ['config', '10.244.3.1-24', '10.244.3.0', '.lock', '10.244.3.0-33']) assert.equal(parseSubnetKey(bad), null, bad);
    assert.throws(() => formatSubnetKey('10.244.3.1/24'));
  });

  void it('writes exactly flannel\'s JSON', () => {
    assert.equal(
      formatLeaseAttrs({ publicIp: '192.168.1.5', backendType: 'vxlan', backendData: { VtepMAC: '0a:58:0a:f4:03:00', VNI: 1 } }),
      '{"PublicIP":"192.168.1.5","BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"0a:58:0a:f4:03:00"}}',
    );
    assert.equal(formatLeaseAttrs({ publicIp: '192.168.1.5', backendType: 'host-gw', backendData: {} }), '{"PublicIP":"192.168.1.5","BackendType":"host-gw"}');
  });

  void it('parses flannel\'s JSON, including fields it does not know', () => {
    const a = parseLeaseAttrs('{"PublicIP":"10.0.0.2","PublicIPv6":null,"BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"aa:bb:cc:dd:ee:ff","Extra":true}}');
    assert.deepEqual({ ...a, raw: undefined }, { publicIp: '10.0.0.2', backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:ff', Extra: true }, raw: undefined });
    assert.throws(() => parseLeaseAttrs('{"PublicIP":"nope"}'), /PublicIP/);
    assert.throws(() => parseLeaseAttrs('[]'), /not a JSON object/);
    assert.throws(() => parseLeaseAttrs('{"PublicIP":"10.0.0.2","BackendData":{"VNI":"1"}}'), /VNI/);
  });
});

// Dual stack: flannel's MakeSubnetKey / ParseSubnetKey ("&" joins the families) and LeaseAttrs
// with PublicIPv6 and BackendV6Data (pkg/lease/lease.go).
void describe('lease-json dual stack', () => {
  void it('formats and parses dual-stack keys in Go\'s IPv6 text form', () => {
    assert.equal(formatSubnetKey('10.244.3.0/24', 'fd00:10:244:3::/64'), '10.244.3.0-24&fd00:10:244:3::-64');
    assert.equal(formatSubnetKey('10.244.3.0/24', 'FD00:0010:0244:0003:0:0:0:0/64'), '10.244.3.0-24&fd00:10:244:3::-64');
    assert.deepEqual(parseLeaseKey('10.244.3.0-24&fd00:10:244:3::-64'), { subnet: '10.244.3.0/24', ipv6Subnet: 'fd00:10:244:3::/64' });
    assert.deepEqual(parseLeaseKey('10.244.3.0-24'), { subnet: '10.244.3.0/24' });
    assert.deepEqual(parseLeaseKey('10.5.52.0-24&fd00:0:0:34::-64'), { subnet: '10.5.52.0/24', ipv6Subnet: 'fd00:0:0:34::/64' });
    assert.throws(() => formatSubnetKey('10.244.3.0/24', 'fd00:10:244:3::1/64'), /IPv6 subnet/);
    assert.throws(() => formatSubnetKey('10.244.3.0/24', '10.0.0.0/8'), /IPv6 subnet/);
  });

  void it('reads an IPv6-only key as flannel writes it (an empty IPv4 side is 0.0.0.0-0)', () => {
    assert.deepEqual(parseLeaseKey('0.0.0.0-0&fd00::-64'), { subnet: '0.0.0.0/0', ipv6Subnet: 'fd00::/64' });
    assert.equal(formatSubnetKey('0.0.0.0/0', 'fd00::/64'), '0.0.0.0-0&fd00::-64');
  });

  void it('refuses what flannel\'s subnetRegex or parser would not take', () => {
    for (const bad of ['10.244.3.0-24&', '10.244.3.0-24&FD00::-64', '10.244.3.0-24&fd00::-128', '10.244.3.0-24&fd00::1-64',
      '10.244.3.0-24&fd00::', '10.244.3.0-24&10.0.0.0-8', '10.244.3.0-24&fd00:::-64', 'x10.244.3.0-24&fd00::-64']) {
      assert.equal(parseLeaseKey(bad), null, bad);
    }
  });

  void it('writes PublicIPv6 and BackendV6Data in LeaseAttrs order; IPv4-only bytes unchanged', () => {
    assert.equal(
      formatLeaseAttrs({
        publicIp: '192.168.1.5', publicIpv6: 'fd00::5', backendType: 'vxlan',
        backendData: { VtepMAC: '0a:58:0a:f4:03:00', VNI: 1 }, backendV6Data: { VtepMAC: '0a:58:0a:f4:03:01', VNI: 1 },
      }),
      '{"PublicIP":"192.168.1.5","PublicIPv6":"fd00::5","BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"0a:58:0a:f4:03:00"},"BackendV6Data":{"VNI":1,"VtepMAC":"0a:58:0a:f4:03:01"}}',
    );
    assert.equal(
      formatLeaseAttrs({ publicIp: '192.168.1.5', publicIpv6: 'fd00::5', backendType: 'host-gw', backendData: {}, backendV6Data: {} }),
      '{"PublicIP":"192.168.1.5","PublicIPv6":"fd00::5","BackendType":"host-gw"}',
    );
    assert.equal(
      formatLeaseAttrs({ publicIp: '192.168.1.5', backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:ff' } }),
      '{"PublicIP":"192.168.1.5","BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"aa:bb:cc:dd:ee:ff"}}',
    );
  });

  void it('parses flanneld\'s dual-stack value and round-trips it byte for byte', () => {
    const text = '{"PublicIP":"10.0.0.2","PublicIPv6":"fd00:1::2","BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"aa:bb:cc:dd:ee:ff"},"BackendV6Data":{"VNI":1,"VtepMAC":"aa:bb:cc:dd:ee:01"}}';
    const a = parseLeaseAttrs(text);
    assert.equal(a.publicIpv6, 'fd00:1::2');
    assert.deepEqual(a.backendV6Data, { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:01' });
    assert.equal(formatLeaseAttrs(a), text);
    assert.equal(parseLeaseAttrs('{"PublicIP":"10.0.0.2","PublicIPv6":"FD00:1:0::2"}').publicIpv6, 'fd00:1::2');
    const v4 = parseLeaseAttrs('{"PublicIP":"10.0.0.2","PublicIPv6":null,"BackendType":"host-gw","BackendV6Data":null}');
    assert.equal(v4.publicIpv6, undefined);
    assert.equal(v4.backendV6Data, undefined);
    assert.throws(() => parseLeaseAttrs('{"PublicIP":"10.0.0.2","PublicIPv6":"10.0.0.3"}'), /PublicIPv6/);
    assert.throws(() => parseLeaseAttrs('{"PublicIP":"10.0.0.2","PublicIPv6":""}'), /PublicIPv6/);
    assert.throws(() => parseLeaseAttrs('{"PublicIP":"10.0.0.2","BackendV6Data":{"VNI":true}}'), /BackendV6Data.VNI/);
    assert.throws(() => parseLeaseAttrs('{"PublicIP":"10.0.0.2","BackendV6Data":[]}'), /BackendV6Data/);
  });

  void it('sameLeaseData sees a change on either family', () => {
    const base: Lease = { subnet: '10.1.2.0/24', publicIp: '10.0.0.2', backendType: 'vxlan', backendData: { VNI: 1 }, expiration: 1, ipv6Subnet: 'fd00:0:0:2::/64', publicIpv6: 'fd00::2', backendV6Data: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:01' } };
    assert.ok(sameLeaseData(base, { ...base, expiration: 2 }));
    assert.ok(!sameLeaseData(base, { ...base, ipv6Subnet: 'fd00:0:0:3::/64' }));
    assert.ok(!sameLeaseData(base, { ...base, publicIpv6: 'fd00::3' }));
    assert.ok(!sameLeaseData(base, { ...base, backendV6Data: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:02' } }));
    const { ipv6Subnet: _s, publicIpv6: _p, backendV6Data: _d, ...v4only } = base;
    assert.ok(!sameLeaseData(base, v4only));
  });
});

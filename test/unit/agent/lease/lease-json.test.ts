// flannel's lease key and JSON: exact bytes, tolerant parsing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatLeaseAttrs, formatSubnetKey, parseLeaseAttrs, parseSubnetKey } from '../../../../agent/lease/lease-json.ts';

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

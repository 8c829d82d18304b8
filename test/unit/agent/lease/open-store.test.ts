// Flag selection for the lease store, and the etcd key/value helpers that need no server.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeStoreFlags } from '../../../../agent/lease/open-store.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { etcdKeys, etcdTransportFor, kvToLease } from '../../../../agent/lease/etcd/client.ts';
import { createEtcdClient, etcdSecurityOptions } from '../../../../agent/lease/etcd/grpc.ts';

void describe('store flags', () => {
  void it('selects file or etcd and names the bad flag', () => {
    assert.deepEqual(normalizeStoreFlags({}), { kind: 'file', dir: '/var/lib/weft/leases' });
    assert.deepEqual(normalizeStoreFlags({ store: 'file:/tmp/x' }), { kind: 'file', dir: '/tmp/x' });
    assert.deepEqual(normalizeStoreFlags({ etcdEndpoints: 'http://10.0.0.1:2379, http://10.0.0.2:2379' }),
      { kind: 'etcd', endpoints: ['http://10.0.0.1:2379', 'http://10.0.0.2:2379'], prefix: '/coreos.com/network' });
    assert.throws(() => normalizeStoreFlags({ store: 'etcd' }), /--store "etcd" must be file:/);
    assert.throws(() => normalizeStoreFlags({ store: 'file:/x', etcdEndpoints: 'http://a:1' }), /mutually exclusive/);
    assert.throws(() => normalizeStoreFlags({ etcdEndpoints: ' , ' }), /lists no URL/);
    assert.throws(() => normalizeStoreFlags({ etcdPrefix: '/p' }), /needs --etcd-endpoints/);
    assert.throws(() => normalizeStoreFlags({ etcdEndpoints: 'http://a:1', etcdPrefix: 'p' }), /must start with/);
    assert.throws(() => createEtcdClient(['10.0.0.1:2379']), /not a URL/);
  });
});

void describe('etcd helpers', () => {
  void it('uses flannel\'s keys and reads leases from key/value pairs', () => {
    assert.deepEqual(etcdKeys('/coreos.com/network/'), { config: '/coreos.com/network/config', subnets: '/coreos.com/network/subnets/' });
    const p = '/coreos.com/network/subnets/';
    assert.deepEqual(kvToLease(`${p}10.244.3.0-24`, '{"PublicIP":"10.0.0.1","BackendType":"host-gw"}', p),
      { subnet: '10.244.3.0/24', publicIp: '10.0.0.1', backendType: 'host-gw', backendData: {}, expiration: 0 });
    assert.equal(kvToLease(`${p}10.244.3.0-24`, 'garbage', p), null);
    assert.equal(kvToLease('/coreos.com/network/config', '{}', p), null);
  });

  void it('reads flanneld\'s dual-stack and IPv6-only key/value pairs', () => {
    const p = '/coreos.com/network/subnets/';
    assert.deepEqual(kvToLease(`${p}10.244.3.0-24&fd00:10:244:3::-64`, '{"PublicIP":"10.0.0.1","PublicIPv6":"fd00::1","BackendType":"host-gw"}', p),
      { subnet: '10.244.3.0/24', ipv6Subnet: 'fd00:10:244:3::/64', publicIp: '10.0.0.1', publicIpv6: 'fd00::1', backendType: 'host-gw', backendData: {}, expiration: 0 });
    assert.deepEqual(kvToLease(`${p}0.0.0.0-0&fd00:10:244:3::-64`, '{"PublicIP":"0.0.0.0","PublicIPv6":"fd00::1","BackendType":"vxlan","BackendV6Data":{"VNI":1,"VtepMAC":"aa:bb:cc:dd:ee:ff"}}', p),
      { subnet: '0.0.0.0/0', ipv6Subnet: 'fd00:10:244:3::/64', publicIp: '0.0.0.0', publicIpv6: 'fd00::1', backendType: 'vxlan', backendData: {}, backendV6Data: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:ff' }, expiration: 0 });
    assert.equal(kvToLease(`${p}10.244.3.0-24&fd00:10:244:3::-64`, '{"PublicIP":"10.0.0.1","PublicIPv6":"10.0.0.2"}', p), null);
  });
});

void describe('etcd TLS and auth', () => {
  void it('reads the CA, certificate and key files into grpc credentials; auth from username/password; a missing file names its flag', () => {
    const t = mkdtempSync(join(tmpdir(), 'weft-etcd-sec-'));
    try {
      for (const n of ['ca', 'cert', 'key']) writeFileSync(join(t, n), `${n} bytes`);
      const o = etcdSecurityOptions({ cafile: join(t, 'ca'), certfile: join(t, 'cert'), keyfile: join(t, 'key'), username: 'u', password: 'p' });
      assert.equal(o.credentials?.rootCertificate.toString(), 'ca bytes');
      assert.equal(o.credentials?.certChain?.toString(), 'cert bytes');
      assert.equal(o.credentials?.privateKey?.toString(), 'key bytes');
      assert.deepEqual(o.auth, { username: 'u', password: 'p' });
      assert.deepEqual(etcdSecurityOptions({}), {}, 'plain http: no credentials, no auth');
      assert.throws(() => etcdSecurityOptions({ cafile: join(t, 'nope') }), /^Error: --etcd-cafile ".*nope": ENOENT/);
    } finally {
      rmSync(t, { recursive: true, force: true });
    }
  });

  void it('takes the JSON gateway unless a client certificate meets password auth (etcd refuses that on the gateway)', () => {
    assert.equal(etcdTransportFor({}), 'gateway');
    assert.equal(etcdTransportFor({ cafile: '/ca', username: 'u', password: 'p' }), 'gateway');
    assert.equal(etcdTransportFor({ cafile: '/ca', certfile: '/c', keyfile: '/k' }), 'gateway');
    assert.equal(etcdTransportFor({ cafile: '/ca', certfile: '/c', keyfile: '/k', username: 'u', password: 'p' }), 'grpc');
  });
});

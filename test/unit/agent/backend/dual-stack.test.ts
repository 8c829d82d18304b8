import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createBackend } from '../../../../agent/backend/index.ts';
import { chooseUplinkV6 } from '../../../../agent/backend/uplink-v6.ts';
import type { BackendConf } from '../../../../agent/config/backend-conf.ts';
import { createAgentLog } from '../../../../agent/log.ts';
import type { Lease } from '../../../../agent/lease/store.ts';
import type { Uplink } from '../../../../agent/uplink.ts';
import type { Addr } from '../../../../lib/netlink/index.ts';

const log = createAgentLog('error', () => {});
const uplink: Uplink = { index: 2, name: 'eth0', mtu: 1500, publicIp: '192.0.2.11', cidr: '192.0.2.11/24', publicIpOnUplink: true };
const ipv6 = { publicIp: '2001:db8:2::11', cidr: '2001:db8:2::11/64', onUplink: true };
const conf = (type: BackendConf['type']): BackendConf => ({ type, vni: 1, port: 8472, directRouting: false, gbp: false, checksumOffload: 'auto' });
const opts = { subnetFile: '/nonexistent/subnet.env', log, network: '10.244.0.0/16' };
const own: Lease = { subnet: '10.244.1.0/24', publicIp: '192.0.2.11', backendType: 'vxlan', backendData: {}, expiration: 0, ipv6Subnet: 'fd00:10:244:1::/64' };
const addr = (o: Partial<Addr>): Addr => ({ index: 2, family: 6, cidr: '2001:db8:2::11/64', address: '2001:db8:2::11', prefix: 64, scope: 0, flags: 0, ...o } as Addr);

void describe('backends with IPv6', () => {
  it('vxlan: BackendV6Data has the VNI and a MAC of its own; flannel-v6.<VNI> spec over PublicIPv6 with the /128', () => {
    const be = createBackend(conf('vxlan'), uplink, { ...opts, ipv6 });
    const v4 = be.backendData();
    const v6 = be.backendV6Data?.();
    assert.equal(v6?.['VNI'], 1);
    assert.match(String(v6?.['VtepMAC']), /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/);
    assert.notEqual(v6?.['VtepMAC'], v4['VtepMAC']);
    const spec6 = (be as unknown as { spec6(l: Lease): unknown }).spec6(own);
    assert.deepEqual(spec6, { name: 'flannel-v6.1', vni: 1, port: 8472, local: '2001:db8:2::11', uplink: 'eth0', mac: v6?.['VtepMAC'], mtu: 1430, address: 'fd00:10:244:1::/128' });
  });

  it('vxlan: pods get the MTU that fits both encapsulations (uplink - 70) with IPv6, uplink - 50 without', () => {
    assert.equal(createBackend(conf('vxlan'), uplink, { ...opts, ipv6 }).podMtu(), 1430);
    assert.equal(createBackend(conf('vxlan'), uplink, opts).podMtu(), 1450);
    assert.equal(createBackend(conf('vxlan'), uplink, opts).backendV6Data?.(), undefined);
  });

  it('host-gw: empty BackendV6Data; refuses a PublicIPv6 that is not on the uplink', () => {
    assert.deepEqual(createBackend(conf('host-gw'), uplink, { ...opts, ipv6 }).backendV6Data?.(), {});
    assert.throws(() => createBackend(conf('host-gw'), uplink, { ...opts, ipv6: { ...ipv6, onUplink: false } }), /PublicIPv6 2001:db8:2::11 is not on the uplink eth0/);
  });

  it('vxlan with IPv6 refuses a VNI whose flannel-v6.<VNI> name would not fit IFNAMSIZ', () => {
    assert.equal(createBackend({ ...conf('vxlan'), vni: 9999 }, uplink, { ...opts, ipv6 }).backendV6Data?.()?.['VNI'], 9999);
    assert.throws(() => createBackend({ ...conf('vxlan'), vni: 10000 }, uplink, { ...opts, ipv6 }), /VNI must be below 10000 \(the device name flannel-v6\.10000 exceeds 15 bytes\)/);
    assert.equal(createBackend({ ...conf('vxlan'), vni: 10000 }, uplink, opts).backendData()['VNI'], 10000, 'IPv4 only: flannel.10000 fits');
  });

  it('udp refuses IPv6 with a message naming EnableIPv6', () => {
    assert.throws(() => createBackend({ ...conf('udp'), port: 8285 }, uplink, { ...opts, ipv6 }), /udp backend is IPv4-only.*EnableIPv6/);
  });
});

void describe('chooseUplinkV6', () => {
  it('the first global address of the uplink; link-local and other links ignored', () => {
    const got = chooseUplinkV6([addr({ cidr: 'fe80::1/64', address: 'fe80::1', scope: 253 }), addr({ index: 3, cidr: '2001:db8:9::1/64', address: '2001:db8:9::1' }), addr({})], uplink);
    assert.deepEqual(got, ipv6);
  });

  it('--public-ipv6 on the uplink, elsewhere, or not an IPv6 address', () => {
    assert.deepEqual(chooseUplinkV6([addr({}), addr({ cidr: '2001:db8:2::99/64', address: '2001:db8:2::99' })], uplink, '2001:DB8:2::99'),
      { publicIp: '2001:db8:2::99', cidr: '2001:db8:2::99/64', onUplink: true });
    assert.deepEqual(chooseUplinkV6([addr({})], uplink, '2001:db8:7::1'), { publicIp: '2001:db8:7::1', cidr: '2001:db8:2::11/64', onUplink: false });
    assert.throws(() => chooseUplinkV6([addr({})], uplink, '192.0.2.11'), /--public-ipv6 "192.0.2.11" is not an IPv6 address/);
  });

  it('no global IPv6 address on the uplink: a clear error', () => {
    assert.throws(() => chooseUplinkV6([addr({ scope: 253, cidr: 'fe80::1/64', address: 'fe80::1' })], uplink), /uplink eth0 has no global IPv6 address/);
  });
});

// flannel's node annotation format: node -> lease, lease -> annotations, podCIDR choice.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { annotationKeys, applyPublicIpOverwrite, leaseAnnotations, nodePodCidr, nodePodCidr4, nodeToLease, subnetInNetwork, type KubeNode } from '../../../../../agent/lease/kube/node-lease.ts';

const P = 'flannel.alpha.coreos.com';
const node = (annotations: Record<string, string>, spec: KubeNode['spec'] = { podCIDR: '10.244.3.0/24' }): KubeNode => ({ metadata: { name: 'n1', annotations }, spec });
const flannelAnnotations = {
  'flannel.alpha.coreos.com/backend-data': '{"VNI":1,"VtepMAC":"aa:bb:cc:dd:ee:ff"}',
  'flannel.alpha.coreos.com/backend-type': 'vxlan',
  'flannel.alpha.coreos.com/kube-subnet-manager': 'true',
  'flannel.alpha.coreos.com/public-ip': '192.0.2.7',
};

void describe('kube node-lease', () => {
  void it('reads what flanneld writes', () => {
    assert.deepEqual(nodeToLease(node(flannelAnnotations), P), {
      subnet: '10.244.3.0/24', publicIp: '192.0.2.7', backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:ff' }, expiration: 0,
    });
  });
  void it('writes what flanneld writes (compact JSON, "null" for no backend data)', () => {
    assert.deepEqual(leaseAnnotations(P, { publicIp: '192.0.2.7', backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:ff' } }), flannelAnnotations);
    assert.equal(leaseAnnotations(P, { publicIp: '192.0.2.7', backendType: 'host-gw', backendData: {} })[annotationKeys(P).backendData], 'null');
    assert.deepEqual(nodeToLease(node({ ...flannelAnnotations, 'flannel.alpha.coreos.com/backend-data': 'null' }), P)?.backendData, {});
  });
  void it('keeps an empty backend-type (flanneld\'s udp backend publishes none) but not a missing one', () => {
    assert.equal(nodeToLease(node({ ...flannelAnnotations, 'flannel.alpha.coreos.com/backend-type': '', 'flannel.alpha.coreos.com/backend-data': 'null' }), P)?.backendType, '');
    const { 'flannel.alpha.coreos.com/backend-type': _, ...untyped } = flannelAnnotations;
    assert.equal(nodeToLease(node(untyped), P), null);
  });
  void it('ignores nodes that are not flannel/weft nodes yet, and broken backend data', () => {
    assert.equal(nodeToLease(node({}), P), null);
    assert.equal(nodeToLease(node({ ...flannelAnnotations, 'flannel.alpha.coreos.com/kube-subnet-manager': 'false' }), P), null);
    assert.equal(nodeToLease(node(flannelAnnotations, {}), P), null);
    assert.equal(nodeToLease(node({ ...flannelAnnotations, 'flannel.alpha.coreos.com/backend-data': '{' }), P), null);
    assert.equal(nodeToLease(node(flannelAnnotations), 'example.com'), null);
  });
  void it('public-ip-overwrite and public-ipv6-overwrite replace the published addresses, as flanneld applies them', () => {
    const attrs = { publicIp: '192.0.2.7', backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:ff' } };
    const dual = { ...attrs, publicIpv6: '2001:db8::7', backendV6Data: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:01' } };
    assert.deepEqual(applyPublicIpOverwrite(node({ [`${P}/public-ip-overwrite`]: '203.0.113.7' }), P, attrs), { ...attrs, publicIp: '203.0.113.7' });
    assert.deepEqual(applyPublicIpOverwrite(node({ [`${P}/public-ip-overwrite`]: '' }), P, attrs), attrs, 'empty: the own address');
    assert.deepEqual(applyPublicIpOverwrite(node({ [`${P}/public-ipv6-overwrite`]: '2001:DB8:0::9' }), P, dual), { ...dual, publicIpv6: '2001:db8::9' });
    assert.deepEqual(applyPublicIpOverwrite(node({ [`${P}/public-ipv6-overwrite`]: '2001:db8::9' }), P, attrs), attrs, 'IPv4-only: the v6 overwrite is unused');
    assert.deepEqual(applyPublicIpOverwrite(node({ 'example.com/public-ip-overwrite': '203.0.113.7' }), 'example.com', attrs).publicIp, '203.0.113.7');
    assert.throws(() => applyPublicIpOverwrite(node({ [`${P}/public-ip-overwrite`]: 'nat.example.com' }), P, attrs), /public-ip-overwrite="nat.example.com" is not an IPv4 address/);
    assert.throws(() => applyPublicIpOverwrite(node({ [`${P}/public-ipv6-overwrite`]: '203.0.113.7' }), P, dual), /public-ipv6-overwrite="203.0.113.7" is not an IPv6 address/);
    assert.equal(leaseAnnotations(P, applyPublicIpOverwrite(node({ [`${P}/public-ip-overwrite`]: '203.0.113.7' }), P, attrs))[`${P}/public-ip`], '203.0.113.7');
  });
  void it('takes the IPv4 entry of podCIDRs first, in network form', () => {
    assert.equal(nodePodCidr4({ spec: { podCIDRs: ['fd00::/64', '10.244.9.1/24'], podCIDR: 'fd00::/64' } }), '10.244.9.0/24');
    assert.equal(nodePodCidr4({ spec: { podCIDR: '10.244.4.0/24' } }), '10.244.4.0/24');
    assert.equal(nodePodCidr4({ spec: {} }), null);
  });
  void it('checks the subnet lies in the Network', () => {
    assert.equal(subnetInNetwork('10.244.3.0/24', '10.244.0.0/16'), true);
    assert.equal(subnetInNetwork('10.245.3.0/24', '10.244.0.0/16'), false);
    assert.equal(subnetInNetwork('10.0.0.0/8', '10.244.0.0/16'), false);
  });
  void it('joins the prefix and the name as flanneld does', () => {
    assert.equal(annotationKeys('example.com').publicIp, 'example.com/public-ip');
    assert.equal(annotationKeys('example.com/weft').publicIp, 'example.com/weft-public-ip');
    assert.equal(annotationKeys('example.com/weft-').backendV6Data, 'example.com/weft-backend-v6-data');
  });
});

// flanneld v0.28.10 on a dual-stack node (vxlan): both families' annotations beside spec.podCIDRs.
const dualAnnotations = {
  ...flannelAnnotations,
  'flannel.alpha.coreos.com/backend-v6-data': '{"VNI":1,"VtepMAC":"aa:bb:cc:dd:ee:01"}',
  'flannel.alpha.coreos.com/public-ipv6': '2001:db8::7',
};
const dualSpec = { podCIDR: '10.244.3.0/24', podCIDRs: ['10.244.3.0/24', 'fd00:10:244:3::/64'] };

void describe('kube node-lease, IPv6 (flannel\'s dual-stack forms)', () => {
  void it('reads public-ipv6, backend-v6-data and the IPv6 podCIDR into the lease', () => {
    assert.deepEqual(nodeToLease(node(dualAnnotations, dualSpec), P), {
      subnet: '10.244.3.0/24', publicIp: '192.0.2.7', backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:ff' }, expiration: 0,
      ipv6Subnet: 'fd00:10:244:3::/64', publicIpv6: '2001:db8::7', backendV6Data: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:01' },
    });
    // host-gw publishes "null" v6 data.
    assert.deepEqual(nodeToLease(node({ ...dualAnnotations, 'flannel.alpha.coreos.com/backend-v6-data': 'null' }, dualSpec), P)?.backendV6Data, {});
  });
  void it('leaves the IPv6 side out when any part of it is missing or broken, keeping the IPv4 lease', () => {
    const v4only = (l: ReturnType<typeof nodeToLease>): unknown => [l?.subnet, l?.ipv6Subnet, l?.publicIpv6, l?.backendV6Data];
    assert.deepEqual(v4only(nodeToLease(node(dualAnnotations), P)), ['10.244.3.0/24', undefined, undefined, undefined]);
    assert.deepEqual(v4only(nodeToLease(node(flannelAnnotations, dualSpec), P)), ['10.244.3.0/24', undefined, undefined, undefined]);
    assert.deepEqual(v4only(nodeToLease(node({ ...dualAnnotations, 'flannel.alpha.coreos.com/public-ipv6': '192.0.2.8' }, dualSpec), P)), ['10.244.3.0/24', undefined, undefined, undefined]);
    assert.deepEqual(v4only(nodeToLease(node({ ...dualAnnotations, 'flannel.alpha.coreos.com/backend-v6-data': '[1]' }, dualSpec), P)), ['10.244.3.0/24', undefined, undefined, undefined]);
  });
  void it('an IPv6-only node is a lease only in an IPv6-only cluster: its IPv6 side, flannel\'s zero IPv4 side', () => {
    const v6spec = { podCIDR: 'fd00:10:244:3::/64', podCIDRs: ['fd00:10:244:3::/64'] };
    assert.equal(nodeToLease(node(dualAnnotations, v6spec), P), null);
    // What flanneld's vxlan writes IPv6-only: no backend-data, no public-ip.
    const flannelV6 = { [`${P}/backend-type`]: 'vxlan', [`${P}/kube-subnet-manager`]: 'true', [`${P}/public-ipv6`]: '2001:db8::7', [`${P}/backend-v6-data`]: '{"VNI":1,"VtepMAC":"aa:bb:cc:dd:ee:01"}' };
    const want = { subnet: '0.0.0.0/0', publicIp: '0.0.0.0', backendType: 'vxlan', backendData: {}, expiration: 0, ipv6Subnet: 'fd00:10:244:3::/64', publicIpv6: '2001:db8::7', backendV6Data: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:01' } };
    assert.deepEqual(nodeToLease(node(flannelV6, v6spec), P, true), want);
    assert.deepEqual(nodeToLease(node(flannelV6, dualSpec), P, true), want, 'an IPv4 podCIDR is ignored then');
    assert.equal(nodeToLease(node({ ...flannelV6, [`${P}/public-ipv6`]: '192.0.2.7' }, v6spec), P, true), null);
    assert.equal(nodeToLease(node(flannelV6, { podCIDR: '10.244.3.0/24' }), P, true), null);
    assert.deepEqual(leaseAnnotations(P, { publicIp: '192.0.2.7', backendType: 'vxlan', backendData: {}, publicIpv6: '2001:db8::7', backendV6Data: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:01' } }, true), flannelV6);
    assert.deepEqual(leaseAnnotations(P, { publicIp: '192.0.2.7', backendType: 'host-gw', backendData: {}, publicIpv6: '2001:db8::7', backendV6Data: {} }, true),
      { [`${P}/backend-type`]: 'host-gw', [`${P}/kube-subnet-manager`]: 'true', [`${P}/public-ipv6`]: '2001:db8::7', [`${P}/backend-v6-data`]: 'null', [`${P}/backend-data`]: 'null', [`${P}/public-ip`]: '0.0.0.0' });
  });
  void it('writes the v6 annotations only with the IPv6 attributes', () => {
    const attrs = { publicIp: '192.0.2.7', backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:ff' } };
    assert.deepEqual(leaseAnnotations(P, { ...attrs, publicIpv6: '2001:db8::7', backendV6Data: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:01' } }), dualAnnotations);
    assert.equal(leaseAnnotations(P, { ...attrs, backendType: 'host-gw', backendData: {}, publicIpv6: '2001:db8::7', backendV6Data: {} })['flannel.alpha.coreos.com/backend-v6-data'], 'null');
    assert.equal(Object.keys(leaseAnnotations(P, attrs)).some((k) => k.includes('v6')), false);
  });
  void it('picks the IPv6 podCIDR in network form and checks IPv6 containment', () => {
    assert.equal(nodePodCidr({ spec: { podCIDRs: ['10.244.3.0/24', 'fd00:10:244:3::1/64'] } }, 6), 'fd00:10:244:3::/64');
    assert.equal(nodePodCidr({ spec: { podCIDR: '10.244.3.0/24' } }, 6), null);
    assert.equal(subnetInNetwork('fd00:10:244:3::/64', 'fd00:10:244::/56'), true);
    assert.equal(subnetInNetwork('fd00:10:245:3::/64', 'fd00:10:244::/56'), false);
    assert.equal(subnetInNetwork('10.244.3.0/24', 'fd00:10:244::/56'), false);
  });
});

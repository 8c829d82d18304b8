// flannel's node annotation format: node -> lease, lease -> annotations, podCIDR choice.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { annotationKeys, leaseAnnotations, nodePodCidr4, nodeToLease, subnetInNetwork, type KubeNode } from '../../../../agent/kube/node-lease.ts';

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
  void it('ignores nodes that are not flannel/weft nodes yet, and broken backend data', () => {
    assert.equal(nodeToLease(node({}), P), null);
    assert.equal(nodeToLease(node({ ...flannelAnnotations, 'flannel.alpha.coreos.com/kube-subnet-manager': 'false' }), P), null);
    assert.equal(nodeToLease(node(flannelAnnotations, {}), P), null);
    assert.equal(nodeToLease(node({ ...flannelAnnotations, 'flannel.alpha.coreos.com/backend-data': '{' }), P), null);
    assert.equal(nodeToLease(node(flannelAnnotations), 'example.com'), null);
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
});

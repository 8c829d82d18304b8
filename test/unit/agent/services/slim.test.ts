import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serviceUnits } from '../../../../agent/services/model.ts';
import { slimService, slimSlice } from '../../../../agent/services/slim.ts';
import type { EndpointSlice, Service } from '../../../../agent/services/types.ts';
import { NODE } from './fixtures.ts';

// As the API server sends them (managedFields already dropped by the informer).
const API_SVC = {
  metadata: { name: 'lb', namespace: 'default', uid: 'a1b2', resourceVersion: '41', creationTimestamp: '2026-12-03T05:00:00Z', labels: { app: 'lb' }, annotations: { note: 'x' } },
  spec: {
    type: 'LoadBalancer', clusterIP: '10.96.0.20', clusterIPs: ['10.96.0.20'], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', externalTrafficPolicy: 'Local',
    internalTrafficPolicy: 'Cluster', healthCheckNodePort: 31000, sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } }, externalIPs: ['192.0.2.7'],
    selector: { app: 'lb' }, allocateLoadBalancerNodePorts: true,
    ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: 30080, appProtocol: 'http' }],
  },
  status: { loadBalancer: { ingress: [{ ip: '198.51.100.1', ipMode: 'VIP', ports: [] }] }, conditions: [] },
} as unknown as Service;

const API_SLICE = {
  metadata: { name: 'lb-abc', namespace: 'default', uid: 'c3d4', resourceVersion: '42', generation: 3, ownerReferences: [{ kind: 'Service', name: 'lb' }], labels: { 'kubernetes.io/service-name': 'lb', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' } },
  addressType: 'IPv4',
  endpoints: [
    { addresses: ['10.244.1.5'], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'n1', zone: 'z1', targetRef: { kind: 'Pod', name: 'p1', uid: 'e5' }, hints: { forZones: [{ name: 'z1' }] } },
    { addresses: ['10.244.2.5'], conditions: { ready: false, serving: true, terminating: true }, nodeName: 'n2', targetRef: { kind: 'Pod', name: 'p2' } },
    { addresses: ['10.244.3.5'], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'n3' },
  ],
  ports: [{ name: 'http', protocol: 'TCP', port: 8080, appProtocol: 'http' }],
} as unknown as EndpointSlice;

void describe('services slim objects', () => {
  it('keeps only what the model reads', () => {
    assert.deepEqual(slimService(API_SVC), {
      metadata: { name: 'lb', namespace: 'default', resourceVersion: '41' },
      spec: {
        // clusterIP is clusterIPs[0]: left out (the model reads clusterIPs first).
        type: 'LoadBalancer', clusterIPs: ['10.96.0.20'], externalIPs: ['192.0.2.7'], sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } },
        externalTrafficPolicy: 'Local', internalTrafficPolicy: 'Cluster', healthCheckNodePort: 31000, ipFamilies: ['IPv4'],
        ports: [{ name: 'http', protocol: 'TCP', port: 80, nodePort: 30080 }],
      },
      status: { loadBalancer: { ingress: [{ ip: '198.51.100.1', ipMode: 'VIP' }] } },
    });
    const s = slimSlice(API_SLICE);
    assert.deepEqual(s.metadata, { name: 'lb-abc', namespace: 'default', resourceVersion: '42', labels: { 'kubernetes.io/service-name': 'lb' } });
    assert.deepEqual(s.endpoints?.[0], { addresses: ['10.244.1.5'], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'n1' });
    assert.deepEqual(s.ports, [{ name: 'http', protocol: 'TCP', port: 8080 }]);
    // Equal conditions are one shared, frozen object.
    assert.equal(s.endpoints?.[0]?.conditions, s.endpoints?.[2]?.conditions);
    assert.notEqual(s.endpoints?.[0]?.conditions, s.endpoints?.[1]?.conditions);
    assert.ok(Object.isFrozen(s.endpoints?.[0]?.conditions));
  });

  it('shares repeated port lists and IP families (frozen), and keeps a clusterIP that clusterIPs does not start with', () => {
    const other = { ...API_SVC, metadata: { ...API_SVC.metadata, name: 'lb2' }, spec: { ...API_SVC.spec, clusterIP: '10.96.0.21', clusterIPs: undefined, ports: [{ name: 'http', protocol: 'TCP', port: 80, nodePort: 30080 }] } } as unknown as Service;
    const a = slimService(API_SVC);
    const b = slimService(other);
    assert.equal(a.spec?.ports, b.spec?.ports);
    assert.equal(a.spec?.ipFamilies, b.spec?.ipFamilies);
    assert.ok(Object.isFrozen(a.spec?.ports) && Object.isFrozen(a.spec?.ports?.[0]));
    assert.equal(b.spec?.clusterIP, '10.96.0.21');
    assert.deepEqual(serviceUnits(b, [], NODE).map((u) => u.clusterIP), ['10.96.0.21']);
    const s1 = slimSlice(API_SLICE);
    const s2 = slimSlice({ ...API_SLICE, metadata: { ...API_SLICE.metadata, name: 'lb-def' } } as EndpointSlice);
    assert.equal(s1.ports, s2.ports);
  });

  it('the model makes the same units of the slim objects as of the full ones', () => {
    const full = serviceUnits(API_SVC, [API_SLICE], NODE);
    assert.equal(full.length, 1);
    assert.deepEqual(serviceUnits(slimService(API_SVC), [slimSlice(API_SLICE)], NODE), full);
  });

  it('endpoints come back as they were, with or without node, conditions or address; none and an empty list stay apart', () => {
    const eps = [{ addresses: ['fd00:244::5'] }, { addresses: [], conditions: { ready: false } }, { addresses: ['10.244.1.5', '10.244.1.6'], nodeName: 'n1', conditions: { serving: null } }];
    const s = slimSlice({ metadata: { name: 'x', namespace: 'default' }, addressType: 'IPv6', endpoints: eps } as unknown as EndpointSlice);
    assert.deepEqual(s.endpoints, [{ addresses: ['fd00:244::5'], conditions: {} }, { addresses: [], conditions: { ready: false } }, { addresses: ['10.244.1.5'], nodeName: 'n1', conditions: { serving: null } }]);
    assert.deepEqual(slimSlice({ metadata: { name: 'y' }, endpoints: [] }).endpoints, []);
    assert.equal(slimSlice({ metadata: { name: 'z' }, endpoints: null }).endpoints ?? null, null);
    assert.equal(s.ports, undefined);
  });
});

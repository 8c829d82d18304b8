import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serviceUnits } from '../../../../agent/services/model.ts';
import { portBackends, categorize } from '../../../../agent/services/endpoints.ts';
import { NODE, ep, port, slice, svc } from './fixtures.ts';

void describe('services model', () => {
  it('named target ports resolve per slice; UDP and TCP ports are separate units; SCTP is skipped', () => {
    const s = svc('web', { clusterIP: '10.96.0.10', ports: [port('http', 80, { targetPort: 'http' }), port('dns', 53, { protocol: 'UDP' }), port('x', 9, { protocol: 'SCTP' })] });
    const sl = [
      slice('a', 'web', [ep('10.244.1.5')], [{ name: 'http', port: 8080 }, { name: 'dns', port: 5353, protocol: 'UDP' }]),
      slice('b', 'web', [ep('10.244.2.7')], [{ name: 'http', port: 9090 }]),
    ];
    const us = serviceUnits(s, sl, NODE);
    assert.deepEqual(us.map((u) => u.key), ['default/web/dns/udp/v4', 'default/web/http/tcp/v4']);
    const http = us.find((u) => u.proto === 'tcp');
    assert.deepEqual(http?.cluster.map((b) => `${b.ip}:${b.port}`), ['10.244.1.5:8080', '10.244.2.7:9090']);
    assert.deepEqual(us.find((u) => u.proto === 'udp')?.cluster.map((b) => b.port), [5353]);
  });

  it('ready endpoints win; serving-terminating ones only when none is ready; not-serving ones never', () => {
    const sl = [slice('a', 'web', [
      ep('10.244.1.1', 'n1', { ready: false, serving: true, terminating: true }),
      ep('10.244.1.2', 'n2', { ready: true }),
      ep('10.244.1.3', 'n2', { ready: false, serving: false, terminating: true }),
    ], [{ name: 'http', port: 80 }])];
    const p = port('http', 80);
    assert.deepEqual(categorize(portBackends(sl, p, 4, 'n1')).cluster.map((b) => b.ip), ['10.244.1.2']);
    assert.deepEqual(categorize(portBackends(sl, p, 4, 'n1')).local.map((b) => b.ip), ['10.244.1.1']);
    const noReady = [slice('a', 'web', [ep('10.244.1.1', 'n1', { ready: false, serving: true, terminating: true }), ep('10.244.1.3', 'n2', { ready: false })], [{ name: 'http', port: 80 }])];
    assert.deepEqual(categorize(portBackends(noReady, p, 4, 'n1')).cluster.map((b) => b.ip), ['10.244.1.1']);
    // nil conditions mean ready (kube-proxy reads a missing ready as true).
    assert.equal(portBackends([slice('a', 'web', [{ addresses: ['10.244.9.9'] }], [{ name: 'http', port: 80 }])], p, 4, 'n1')[0]?.ready, true);
  });

  it('traffic policies, NodePort, externalIPs, LoadBalancer ingress (ipMode Proxy skipped), affinity, dual stack, headless', () => {
    const s = svc('lb', {
      type: 'LoadBalancer', clusterIPs: ['10.96.0.20', 'fd00:96::20'], ports: [port('', 80, { nodePort: 30080 })], externalIPs: ['192.0.2.7'],
      externalTrafficPolicy: 'Local', internalTrafficPolicy: 'Local', sessionAffinity: 'ClientIP',
    }, { loadBalancer: { ingress: [{ ip: '198.51.100.1' }, { ip: '198.51.100.2', ipMode: 'Proxy' }, { ip: '2001:db8::1' }] } });
    const sl = [slice('a', 'lb', [ep('10.244.1.5', 'n1'), ep('10.244.2.5', 'n2')], [{ name: '', port: 8080 }]),
      slice('b', 'lb', [ep('fd00:244::5', 'n2')], [{ name: '', port: 8080 }], 'IPv6')];
    const [v4, v6] = serviceUnits(s, sl, NODE);
    assert.equal(v4?.family, 4);
    assert.deepEqual(v4?.externalAddrs, ['192.0.2.7', '198.51.100.1']);
    assert.equal(v4?.nodePort, 30080);
    assert.equal(v4?.affinitySeconds, 10800);
    assert.deepEqual(v4?.internal.map((b) => b.ip), ['10.244.1.5']);
    assert.deepEqual(v4?.external.map((b) => b.ip), ['10.244.1.5']);
    assert.equal(v4?.cluster.length, 2);
    assert.deepEqual(v6?.externalAddrs, ['2001:db8::1']);
    assert.equal(v6?.affinitySeconds, undefined);
    assert.deepEqual(v6?.external, []);
    assert.equal(v6?.hasEndpoints, true);
    assert.deepEqual(serviceUnits(svc('h', { clusterIP: 'None', ports: [port('a', 1)] }), [], NODE), []);
    assert.deepEqual(serviceUnits(svc('e', { type: 'ExternalName', ports: [port('a', 1)] }), [], NODE), []);
  });
});

// Where the Service proxy's memory goes: `node --expose-gc --import tsx scripts/bench/services-memory.ts
// [services, default 10000]` builds N API-shaped Services x 10 endpoints (as the watch cache keeps them,
// slimmed: agent/services/slim.ts), programs them into a namespace of its own through the real
// ServiceProxy with in-memory informers, and prints RSS, peak RSS (VmHWM) and the heap after a full GC
// at each step; then drops the proxy's state one structure at a time, so each one's share is the heap
// it frees. Runs as root (it makes a netns). Not part of `npm run bench`: it needs --expose-gc.
// V8's heap grows as in weftd (default growth); WEFT_BENCH_SVC_MEM_V8_SIZE=1 sets --optimize-for-size (measured, not kept: docs/services.md).
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { createTestNetnsSync } from '../../testkit/netns.ts';
import { FakeInformer } from '../../testkit/fake-informer.ts';
import { createAgentLog } from '../../agent/log.ts';
import { Metrics } from '../../agent/metrics.ts';
import { ServiceProxy } from '../../agent/services/proxy.ts';
import { slimService, slimSlice } from '../../agent/services/slim.ts';
import type { EndpointSlice, Service } from '../../agent/services/types.ts';

const N = Number(process.argv[2] ?? 10_000);
if (process.env['WEFT_BENCH_SVC_MEM_V8_SIZE'] === '1') setFlagsFromString('--optimize-for-size');
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');
const mib = (b: number) => (b / 1048576).toFixed(1);
const hwmMib = () => (Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN) / 1024).toFixed(1);

function step(label: string): void {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  process.stdout.write(`${label.padEnd(34)} RSS ${mib(m.rss)} MiB, peak ${hwmMib()} MiB, heap ${mib(m.heapUsed)} of ${mib(m.heapTotal)} MiB, external ${mib(m.external)} MiB\n`);
}

const ip = (i: number) => `10.${100 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
const cip = (s: number) => `10.97.${(s >> 8) & 255}.${s & 255}`;
/** A Service and its slice as the API server sends them (through JSON, so strings are the parser's). */
function apiObjects(s: number): [Service, EndpointSlice] {
  const meta = { namespace: 'default', uid: '6f1c3a6e-5a1b-4c1e-9d7a-0123456789ab', resourceVersion: String(100_000 + s), creationTimestamp: '2026-12-03T05:00:00Z' };
  return JSON.parse(JSON.stringify([
    { metadata: { ...meta, name: `s${s}` }, spec: { clusterIP: cip(s), clusterIPs: [cip(s)], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', internalTrafficPolicy: 'Cluster', sessionAffinity: 'None', type: 'ClusterIP', ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] }, status: { loadBalancer: {} } },
    {
      metadata: { ...meta, name: `s${s}-1`, generation: 1, labels: { 'kubernetes.io/service-name': `s${s}`, 'endpointslice.kubernetes.io/managed-by': 'weft-bench' } }, addressType: 'IPv4',
      endpoints: Array.from({ length: 10 }, (_, e) => ({ addresses: [ip(s * 10 + e)], nodeName: 'elsewhere', conditions: { ready: true, serving: true, terminating: false } })),
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    },
  ])) as [Service, EndpointSlice];
}

step('before the objects');
const objs = Array.from({ length: N }, (_, s) => apiObjects(s));
const services = new FakeInformer<Service>(objs.map(([x]) => slimService(x)));
const slices = new FakeInformer<EndpointSlice>(objs.map(([, y]) => slimSlice(y)));
objs.length = 0;
step(`${N} Services + slices (slim)`);
const ns = createTestNetnsSync('wsvcm');
const proxy = new ServiceProxy({ services, slices, node: { nodeName: 'n1', clusterCidrs: ['10.244.0.0/16'], nodePortAddresses: [] }, log: createAgentLog('warn'), metrics: new Metrics(), nft: { netnsPath: ns.path } });
try {
  const t0 = performance.now();
  await proxy.start();
  step(`after the cold sync (${Math.round(performance.now() - t0)} ms)`);
  // The proxy's own structures, freed one by one (private: reached through a cast, as this tool only reads sizes).
  const held = proxy as unknown as Record<string, { clear(): void } | { reset(x: unknown[]): void }>;
  for (const f of ['programmed', 'slicesOf', 'epRefs']) {
    (held[f] as { clear(): void }).clear();
    step(`without ${f}`);
  }
  (held['hairpin'] as { reset(x: unknown[]): void }).reset([]);
  step('without the hairpin counts');
} finally {
  proxy.stop();
  ns.destroySync();
}

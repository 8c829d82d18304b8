// `npm run bench -- services`: weftd's Service proxy at 1, 1,000, 5,000 and 10,000 Services x 10
// endpoints (and one Service x 10,000 endpoints) in a namespace of its own: cold programming time,
// one EndpointSlice change -> programmed (p50/p99), rule/element counts, the process's RSS growth.
// kube-proxy is not measured here yet (docs/services.md): it needs the objects in a real API server.
import { createTestNetnsSync } from '../../testkit/netns.ts';
import { runNft } from '../../lib/netfilter/run.ts';
import { createAgentLog } from '../../agent/log.ts';
import { Metrics } from '../../agent/metrics.ts';
import { ServiceProxy } from '../../agent/services/proxy.ts';
import type { EndpointSlice, Service } from '../../agent/services/types.ts';
import { FakeInformer } from '../../testkit/fake-informer.ts';
import { loadAverage, quantile, type BenchResult } from './util.ts';

const CHANGES = 40;

function ip(base: number, i: number): string {
  return `10.${base + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
}

function objects(services: number, eps: number): { svcs: Service[]; slices: EndpointSlice[] } {
  const svcs: Service[] = [];
  const slices: EndpointSlice[] = [];
  for (let s = 0; s < services; s++) {
    const name = `s${s}`;
    svcs.push({ metadata: { name, namespace: 'bench' }, spec: { clusterIP: `10.96.${(s >> 8) & 255}.${s & 255}`, ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } });
    slices.push(slice(name, s, eps, 0));
  }
  return { svcs, slices };
}

function slice(svc: string, s: number, eps: number, gen: number): EndpointSlice {
  return {
    metadata: { name: `${svc}-x`, namespace: 'bench', labels: { 'kubernetes.io/service-name': svc } }, addressType: 'IPv4',
    endpoints: Array.from({ length: eps }, (_, e) => ({ addresses: [ip(100, (s * eps + e + gen) % 4_000_000)], nodeName: 'other', conditions: { ready: true } })),
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  };
}

function counts(netnsPath: string): { rules: number; elements: number } {
  const text = runNft(['list', 'table', 'inet', 'weft-svc'], undefined, { netnsPath, timeoutMs: 300_000 }).stdout;
  const rules = text.split('\n').filter((l) => /^\t\t(?!type |flags |elements|size |timeout |comment )\S/.test(l) && !l.includes(' : ') ).length;
  const json = JSON.parse(runNft(['-j', 'list', 'table', 'inet', 'weft-svc'], undefined, { netnsPath, timeoutMs: 300_000 }).stdout) as { nftables: Array<{ map?: { elem?: unknown[] }; set?: { elem?: unknown[] } }> };
  const elements = json.nftables.reduce((n, x) => n + ((x.map ?? x.set)?.elem?.length ?? 0), 0);
  return { rules, elements };
}

async function one(services: number, eps: number, label: string): Promise<BenchResult[]> {
  const ns = createTestNetnsSync('wsvcb');
  try {
    const { svcs, slices } = objects(services, eps);
    const svcInf = new FakeInformer<Service>(svcs);
    const sliceInf = new FakeInformer<EndpointSlice>(slices);
    let done: (() => void) | undefined;
    const rss0 = process.memoryUsage().rss;
    const proxy = new ServiceProxy({
      services: svcInf, slices: sliceInf, node: { nodeName: 'bench', clusterCidrs: ['10.100.0.0/14'], nodePortAddresses: [] },
      log: createAgentLog('warn'), metrics: new Metrics(), nft: { netnsPath: ns.path }, onUnits: () => done?.(),
    });
    const t0 = performance.now();
    await proxy.start();
    const coldMs = performance.now() - t0;
    const lat: number[] = [];
    for (let i = 1; i <= CHANGES; i++) {
      const s = (i * 7919) % services;
      const programmed = new Promise<void>((r) => { done = r; });
      const c0 = performance.now();
      sliceInf.modify(slice(`s${s}`, s, eps, i));
      await programmed;
      lat.push(performance.now() - c0);
    }
    const rssMiB = (process.memoryUsage().rss - rss0) / 1048576;
    const { rules, elements } = counts(ns.path);
    proxy.stop();
    const load = loadAverage();
    return [
      { name: `${label}: cold program (load ${load.toFixed(1)})`, value: Math.round(coldMs), unit: 'ms' },
      { name: `${label}: one EndpointSlice change -> programmed p50`, value: Number(quantile(lat, 0.5).toFixed(1)), unit: 'ms' },
      { name: `${label}: one EndpointSlice change -> programmed p99`, value: Number(quantile(lat, 0.99).toFixed(1)), unit: 'ms', target: '<= 50 ms at 10,000 Services', ...(services === 10_000 ? { ok: quantile(lat, 0.99) <= 50 } : {}) },
      { name: `${label}: rules / set+map elements`, value: rules, unit: `rules, ${elements} elements` },
      { name: `${label}: RSS growth of the proxy process`, value: Number(rssMiB.toFixed(1)), unit: 'MiB' },
    ];
  } finally {
    ns.destroySync();
  }
}

/** The benchmark's rows. */
export async function benchServices(): Promise<BenchResult[]> {
  const out: BenchResult[] = [];
  for (const n of [1, 1000, 5000, 10_000]) {
    process.stderr.write(`  services: ${n} x 10 endpoints\n`);
    const rows = await one(n, 10, `weft ${n} Services x 10 endpoints`);
    for (const r of rows) process.stderr.write(`    ${r.name}: ${r.value} ${r.unit}\n`);
    out.push(...rows);
  }
  process.stderr.write('  services: 1 x 10,000 endpoints\n');
  out.push(...await one(1, 10_000, 'weft 1 Service x 10,000 endpoints'));
  return out;
}

// weftd --service-proxy's memory path in one process, without a cluster: N API-shaped Services x 10
// endpoints from a stand-in API server (services-memory-api.cjs, a child process), through what weftd
// runs with its V8 flags (agent/memory.ts): the shared watch cache (paged lists of full objects,
// watches), the slim projections, the ServiceProxy programming a namespace of its own; then `changes`
// EndpointSlice changes 1.1 s apart and one resync (the 5-minute full sync, with its table listing).
// Prints RSS, peak RSS (VmHWM) and V8's spaces after each step, change -> programmed and CPU per
// change. Root (a netns), from the repository's root. Bundled as weftd is, it starts where weftd does
// (~53 MiB, a 2 MiB young generation; under tsx ~95 MiB and an 8 MiB one):
//   npx esbuild scripts/bench/services-memory-weftd.ts --bundle --platform=node --format=esm \
//     --outfile=lib/sys/bench-memory.mjs --banner:js="import { createRequire as cr } from 'node:module'; const require = cr(import.meta.url);"
//   node lib/sys/bench-memory.mjs [services, default 10000] [changes, default 10]; rm lib/sys/bench-memory.mjs
// (next to lib/sys/index.ts: the addon's path is relative to the bundle). weftd itself: services-peers.
import { CONTROLLER_YOUNG_MIB, capYoungGeneration, controllerMemoryFlags, setMemoryFlags, setV8Flags } from '../../agent/memory.ts';
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';
import { createTestNetnsSync } from '../../testkit/netns.ts';
import { createAgentLog } from '../../agent/log.ts';
import { Metrics } from '../../agent/metrics.ts';
import { KubeClient } from '../../agent/kube/client.ts';
import { WatchCache } from '../../agent/kube/watch-cache.ts';
import { ServiceProxy } from '../../agent/services/proxy.ts';
import { SLIM_SERVICE, SLIM_SLICE } from '../../agent/services/slim.ts';
import type { EndpointSlice, Service } from '../../agent/services/types.ts';

// As agent/main.ts with --service-proxy; WEFT_BENCH_SVC_MEM_YOUNG=<MiB> sets another cap (0: none, V8's 32 MiB).
const young = controllerMemoryFlags({ serviceProxy: {} }, setMemoryFlags());
setV8Flags(young);
const YOUNG_MIB = Number(process.env['WEFT_BENCH_SVC_MEM_YOUNG'] ?? CONTROLLER_YOUNG_MIB);
if (young.length > 0 && YOUNG_MIB > 0) capYoungGeneration(YOUNG_MIB);

const N = Number(process.argv[2] ?? 10_000);
const CHANGES = Number(process.argv[3] ?? 10);
const status = (k: string) => (Number(new RegExp(`${k}:\\s+(\\d+)`).exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN) / 1024).toFixed(1);
const cpuMs = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; };
/** V8's spaces as committed (size) MiB, for the spaces that move. */
const spaces = () => getHeapSpaceStatistics().filter((s) => s.space_size > 0).map((s) => `${s.space_name.replace('_space', '')} ${(s.space_size / 1048576).toFixed(1)}`).join(', ');
const mib = (n: number) => (n / 1048576).toFixed(1);
const step = (label: string) => {
  const m = process.memoryUsage();
  process.stdout.write(`${label.padEnd(40)} RSS ${status('VmRSS')} MiB (anon ${status('RssAnon')}, file ${status('RssFile')}), peak ${status('VmHWM')} MiB, heap used ${mib(m.heapUsed)} of ${mib(m.heapTotal)} MiB, external ${mib(m.external)} (array buffers ${mib(m.arrayBuffers)})\n    committed MiB: ${spaces()}\n`);
};
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN;

const api = fork('scripts/bench/services-memory-api.cjs', [String(N)], { execArgv: [], stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
const port = await new Promise<number>((resolve) => api.stdout?.once('data', (b: Buffer) => resolve(Number(b.toString().trim()))));
step('start');
const ns = createTestNetnsSync('wsvcw');
const log = createAgentLog('warn');
// WEFT_BENCH_SVC_MEM_PAGE: items per list page (default: the watch cache's).
const page = process.env['WEFT_BENCH_SVC_MEM_PAGE'];
const cache = new WatchCache(new KubeClient({ server: `http://127.0.0.1:${port}` }), { log, ...(page !== undefined ? { pageSize: Number(page) } : {}) });
let seen: ((key: string) => void) | undefined;
const proxy = new ServiceProxy({
  services: cache.informer<Service>({ path: '/api/v1/services', project: SLIM_SERVICE }),
  slices: cache.informer<EndpointSlice>({ path: '/apis/discovery.k8s.io/v1/endpointslices', project: SLIM_SLICE }),
  node: { nodeName: 'n1', clusterCidrs: ['10.244.0.0/16'], nodePortAddresses: [] }, log, metrics: new Metrics(), nft: { netnsPath: ns.path },
  onUnits: (u) => { for (const k of u.keys()) seen?.(k); },
});
try {
  const t0 = performance.now();
  const c0 = cpuMs();
  const informers = [cache.informer<Service>({ path: '/api/v1/services', project: SLIM_SERVICE }), cache.informer<EndpointSlice>({ path: '/apis/discovery.k8s.io/v1/endpointslices', project: SLIM_SLICE })];
  await Promise.all(informers.map((i) => i.synced));
  step(`after the lists (${Math.round(performance.now() - t0)} ms)`);
  await proxy.start();
  step(`after the cold sync (${Math.round(performance.now() - t0)} ms, CPU ${Math.round(cpuMs() - c0)} ms)`);
  // WEFT_BENCH_SVC_MEM_SNAPSHOT=<dir>: a heap snapshot here, for what holds the live heap (it grows the process).
  const snap = process.env['WEFT_BENCH_SVC_MEM_SNAPSHOT'];
  if (snap !== undefined) process.stdout.write(`heap snapshot: ${writeHeapSnapshot(`${snap}/after-cold-sync.heapsnapshot`)}\n`);
  await new Promise((r) => setTimeout(r, 2000));
  const lat: number[] = [];
  const c1 = cpuMs();
  for (let i = 0; i < CHANGES; i++) {
    await new Promise((r) => setTimeout(r, 1100));
    const s = (i * 7919) % N;
    const t = performance.now();
    const done = new Promise<void>((resolve) => { seen = (k) => { if (k === `default/s${s}`) resolve(); }; });
    api.send({ change: s });
    await done;
    lat.push(performance.now() - t);
    if (process.env['WEFT_BENCH_SVC_MEM_EACH'] === '1') step(`change ${i}`);
  }
  step(`after ${CHANGES} changes`);
  const perChange = (cpuMs() - c1) / CHANGES;
  // The 5-minute resync's full sync (a listing of the whole table), as weftd runs it.
  (proxy as unknown as { needFull: boolean }).needFull = true;
  const t2 = performance.now();
  proxy.syncNow();
  step(`after a resync (${Math.round(performance.now() - t2)} ms)`);
  process.stdout.write(`change -> programmed p50 / p99 ${quantile(lat, 0.5).toFixed(1)} / ${quantile(lat, 0.99).toFixed(1)} ms, CPU per change ${perChange.toFixed(1)} ms\n`);
} finally {
  proxy.stop();
  cache.stop();
  api.kill();
  ns.destroySync();
}

// `npm run bench -- services`: weftd's Service proxy at 1, 1,000, 5,000 and 10,000 Services x 10
// endpoints (and one Service x 10,000 endpoints) in a namespace of its own: cold programming time,
// one EndpointSlice change -> programmed (p50/p99; endpoints replaced and counts 9-11), a new
// Service -> programmed, connect time and request rate to the last-created Service against its 10 pods
// directly (in turn) and through a one-rule DNAT with and without masquerade (what DNAT + conntrack cost),
// single-stream bulk throughput over the same four paths (services-bulk.ts),
// rule/element counts, the process's RSS and CPU. The proxy runs in this process with in-memory
// informers (testkit/fake-informer.ts): what is measured is render + diff + kernel.
// Sizes: WEFT_BENCH_SVC_SIZES=1,1000 (default 1,1000,5000,10000); WEFT_BENCH_SVC_BIG=0 skips the
// 10,000-endpoint Service; WEFT_BENCH_SVC_CHANGES (default 60).
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createTestNetnsSync } from '../../testkit/netns.ts';
import { runNft } from '../../lib/netfilter/run.ts';
import { createAgentLog } from '../../agent/log.ts';
import { Metrics } from '../../agent/metrics.ts';
import { ServiceProxy } from '../../agent/services/proxy.ts';
import type { EndpointSlice, Service } from '../../agent/services/types.ts';
import { FakeInformer } from '../../testkit/fake-informer.ts';
import { allUnits } from '../../agent/services/model.ts';
import { renderAll } from '../../agent/services/render.ts';
import { benchServicePeers } from './services-peers.ts';
import { BULK_PORT, bulkRows } from './services-bulk.ts';
import { ROOT, loadAverage, quantile, type BenchResult } from './util.ts';

const SIZES = (process.env['WEFT_BENCH_SVC_SIZES'] ?? '1,1000,5000,10000').split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0);
const BIG = Number(process.env['WEFT_BENCH_SVC_BIG'] ?? 10_000);
const CHANGES = Number(process.env['WEFT_BENCH_SVC_CHANGES'] ?? 60);
const NEW_SERVICES = 5;
const PROBE = join(ROOT, 'scripts', 'bench', 'svc-probe.cjs');
/** An address DNATed by one plain rule to the first server address (the DNAT floor beside weft's ClusterIP). */
const PLAIN_DNAT = '10.97.255.1';
/** The same, masqueraded too. */
const PLAIN_MASQ = '10.97.255.2';
/** The probed Service's endpoints: addresses of the server namespace. */
const SERVER_IPS = Array.from({ length: 10 }, (_, i) => `10.200.0.${10 + i}`);
/** Each probed path's own source address in the node namespace: one path's conntrack entries (TIME_WAIT included) never collide with another's tuples. */
const SOURCE = { via: '10.200.0.2', plain: '10.200.0.3', masq: '10.200.0.4', direct: '10.200.0.5' } as const;

function ip(base: number, i: number): string {
  return `10.${base + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
}

function clusterIP(s: number): string {
  return `10.96.${(s >> 8) & 255}.${s & 255}`;
}

/** Service s; the probed one (`bulk`) has a second port for iperf3. */
function service(s: number, bulk = false): Service {
  const ports = [{ name: 'http', port: 80, protocol: 'TCP' }, ...(bulk ? [{ name: 'bulk', port: BULK_PORT, protocol: 'TCP' }] : [])];
  return { metadata: { name: `s${s}`, namespace: 'bench' }, spec: { clusterIP: clusterIP(s), ports } };
}

function slice(s: number, eps: number, gen: number, ips?: string[]): EndpointSlice {
  return {
    metadata: { name: `s${s}-x`, namespace: 'bench', labels: { 'kubernetes.io/service-name': `s${s}` } }, addressType: 'IPv4',
    endpoints: (ips ?? Array.from({ length: eps }, (_, e) => ip(100, (s * eps + e + gen) % 4_000_000))).map((a) => ({ addresses: [a], nodeName: 'other', conditions: { ready: true } })),
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }, ...(ips !== undefined ? [{ name: 'bulk', port: BULK_PORT, protocol: 'TCP' }] : [])],
  };
}

function counts(netnsPath: string): { rules: number; elements: number } {
  const json = JSON.parse(runNft(['-j', 'list', 'table', 'inet', 'weft-svc'], undefined, { netnsPath, timeoutMs: 300_000 }).stdout) as { nftables: Array<{ rule?: unknown; map?: { elem?: unknown[] }; set?: { elem?: unknown[] } }> };
  const elements = json.nftables.reduce((n, x) => n + ((x.map ?? x.set)?.elem?.length ?? 0), 0);
  return { rules: json.nftables.filter((x) => x.rule !== undefined).length, elements };
}

function sh(argv: string[]): string {
  return execFileSync(argv[0] as string, argv.slice(1), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A server namespace behind a veth of the node namespace, answering on SERVER_IPS:8080; returns a stop function. */
async function startServer(node: string): Promise<{ server: string; stop: () => void }> {
  const srv = createTestNetnsSync('wsvcs');
  sh(['ip', '-n', node, 'link', 'add', 'wsvc0', 'type', 'veth', 'peer', 'name', 'wsvc1', 'netns', srv.name]);
  for (const a of ['10.200.0.1', ...Object.values(SOURCE)]) sh(['ip', '-n', node, 'addr', 'add', `${a}/24`, 'dev', 'wsvc0']);
  for (const a of SERVER_IPS) sh(['ip', '-n', srv.name, 'addr', 'add', `${a}/24`, 'dev', 'wsvc1']);
  for (const [ns, dev] of [[node, 'wsvc0'], [srv.name, 'wsvc1'], [node, 'lo'], [srv.name, 'lo']] as const) sh(['ip', '-n', ns, 'link', 'set', dev, 'up']);
  // A route for the ClusterIPs, so a connect() from the node reaches the nat output hook.
  sh(['ip', '-n', node, 'route', 'add', '10.96.0.0/12', 'via', SERVER_IPS[0] as string]);
  const p = spawn('ip', ['netns', 'exec', srv.name, process.execPath, PROBE, 'server', '8080', ...SERVER_IPS], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    p.stdout.once('data', () => resolve());
    p.once('exit', (c) => reject(new Error(`probe server exited ${String(c)}`)));
  });
  return { server: srv.name, stop: () => { p.kill('SIGKILL'); srv.destroySync(); } };
}

interface Probe { connectP50Us: number; connectP90Us: number; rps: number }

/** One probe round from `source` against `hosts` (taken in turn). */
function probe(node: string, hosts: readonly string[], port: number, source: string): Probe {
  return JSON.parse(sh(['ip', 'netns', 'exec', node, process.execPath, PROBE, 'client', hosts.join(','), String(port), '200', '2', source])) as Probe;
}

function cpuMs(u: NodeJS.CpuUsage): number {
  return (u.user + u.system) / 1000;
}

async function one(services: number, eps: number, label: string, withProbe: boolean): Promise<BenchResult[]> {
  const rssBase = process.memoryUsage().rss;
  const ns = createTestNetnsSync('wsvcb');
  let server: { server: string; stop: () => void } | undefined;
  let proxy: ServiceProxy | undefined;
  try {
    const last = services - 1;
    const svcs = Array.from({ length: services }, (_, s) => service(s, withProbe && s === last));
    const slices = Array.from({ length: services }, (_, s) => (withProbe && s === last ? slice(s, eps, 0, SERVER_IPS) : slice(s, eps, 0)));
    const svcInf = new FakeInformer<Service>(svcs);
    const sliceInf = new FakeInformer<EndpointSlice>(slices);
    let done: (() => void) | undefined;
    proxy = new ServiceProxy({
      services: svcInf, slices: sliceInf, node: { nodeName: 'bench', clusterCidrs: ['10.100.0.0/14'], nodePortAddresses: [] },
      log: createAgentLog('warn'), metrics: new Metrics(), nft: { netnsPath: ns.path }, onUnits: () => done?.(),
    });
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await proxy.start();
    const coldMs = performance.now() - t0;
    const coldCpu = cpuMs(process.cpuUsage(cpu0));
    // Growth over the process before the objects existed: the informers' objects and the proxy's state (a weftd holds both).
    const rssMiB = (process.memoryUsage().rss - rssBase) / 1048576;
    const wait = async (emit: () => void): Promise<number> => {
      const programmed = new Promise<void>((r) => { done = r; });
      const c0 = performance.now();
      emit();
      await programmed;
      return performance.now() - c0;
    };
    const lat: number[] = [];
    const paths = new Map<string, number>();
    const cpu1 = process.cpuUsage();
    for (let i = 1; i <= CHANGES; i++) {
      // Another Service than the probed one; endpoints slide by one and the count moves within 9-11 (or around 10,000).
      const s = services === 1 ? 0 : (i * 7919) % (withProbe ? last : services);
      lat.push(await wait(() => sliceInf.modify(slice(s, eps + [0, 1, -1][i % 3]!, i))));
      paths.set(proxy.lastPath, (paths.get(proxy.lastPath) ?? 0) + 1);
    }
    const changeCpu = cpuMs(process.cpuUsage(cpu1)) / CHANGES;
    const added: number[] = [];
    const addedPaths: string[] = [];
    for (let k = 0; k < NEW_SERVICES; k++) {
      const s = services + 100 + k;
      sliceInf.modify(slice(s, 10, 0));
      added.push(await wait(() => svcInf.modify(service(s))));
      addedPaths.push(proxy.lastPath);
    }
    const { rules, elements } = counts(ns.path);
    const load = loadAverage();
    const rows: BenchResult[] = [
      { name: `${label}: cold program (load ${load.toFixed(1)})`, value: Math.round(coldMs), unit: `ms (CPU ${Math.round(coldCpu)} ms)` },
      { name: `${label}: one EndpointSlice change -> programmed p50`, value: Number(quantile(lat, 0.5).toFixed(1)), unit: `ms (${[...paths].map(([p, n]) => `${n} ${p}`).join(', ')})` },
      { name: `${label}: one EndpointSlice change -> programmed p99`, value: Number(quantile(lat, 0.99).toFixed(1)), unit: 'ms', target: '<= 50 ms at 10,000 Services', ...(services === 10_000 ? { ok: quantile(lat, 0.99) <= 50 } : {}) },
      { name: `${label}: CPU per EndpointSlice change`, value: Number(changeCpu.toFixed(2)), unit: 'ms' },
      { name: `${label}: new Service -> programmed p50`, value: Number(quantile(added, 0.5).toFixed(1)), unit: `ms (${[...new Set(addedPaths)].join(', ')})` },
      { name: `${label}: rules / set+map elements`, value: rules, unit: `rules, ${elements} elements` },
      { name: `${label}: RSS growth, objects + proxy, after cold program`, value: Number(rssMiB.toFixed(1)), unit: `MiB (over ${(rssBase / 1048576).toFixed(0)} MiB of the bench process before)`, ...(services === 10_000 ? { target: '<= 100 MiB at 10,000 Services', ok: rssMiB <= 100 } : {}) },
    ];
    if (withProbe) {
      // With one Service the changes went to the probed one: its endpoints back to the server's.
      if (services === 1) await wait(() => sliceInf.modify(slice(last, eps, 0, SERVER_IPS)));
      server = await startServer(ns.name);
      const serverNs = server.server;
      // The floor of what DNAT + conntrack cost here: one address DNATed by a single rule in a table of its own (weft's filter hooks still run),
      // over the same 10 servers as the ClusterIP (numgen, as weft's choosing chains). The second address is masqueraded as well,
      // as weft masquerades the node's (off-cluster) source to a ClusterIP.
      const spread = `numgen inc mod ${SERVER_IPS.length} map { ${SERVER_IPS.map((a, i) => `${i} : ${a}`).join(', ')} }`;
      runNft(['-f', '-'], [
        'add table ip wbench-dnat', 'add chain ip wbench-dnat out { type nat hook output priority -100; }', 'add chain ip wbench-dnat post { type nat hook postrouting priority 100; }',
        `add rule ip wbench-dnat out ip daddr { ${PLAIN_DNAT}, ${PLAIN_MASQ} } tcp dport 80 dnat to ${spread} : 8080`,
        `add rule ip wbench-dnat out ip daddr { ${PLAIN_DNAT}, ${PLAIN_MASQ} } tcp dport ${BULK_PORT} dnat to ${SERVER_IPS[0] as string}:${BULK_PORT}`,
        `add rule ip wbench-dnat post ct original ip daddr ${PLAIN_MASQ} masquerade fully-random`, '',
      ].join('\n'), { netnsPath: ns.path });
      // Interleaved, three rounds each: the machine's load moves them alike. Every path spreads its connections over the
      // same 10 servers (the direct one goes round their addresses), each from its own source address.
      const via: Probe[] = [];
      const plain: Probe[] = [];
      const masq: Probe[] = [];
      const direct: Probe[] = [];
      for (let r = 0; r < 3; r++) {
        via.push(probe(ns.name, [clusterIP(last)], 80, SOURCE.via));
        plain.push(probe(ns.name, [PLAIN_DNAT], 80, SOURCE.plain));
        masq.push(probe(ns.name, [PLAIN_MASQ], 80, SOURCE.masq));
        direct.push(probe(ns.name, SERVER_IPS, 8080, SOURCE.direct));
      }
      const med = (xs: number[]) => quantile(xs, 0.5);
      const rps = med(via.map((p) => p.rps));
      const rpsDirect = med(direct.map((p) => p.rps));
      rows.push(
        { name: `${label}: connect to the last-created Service p50`, value: Number((med(via.map((p) => p.connectP50Us)) / 1000).toFixed(3)), unit: `ms (direct to its pods ${(med(direct.map((p) => p.connectP50Us)) / 1000).toFixed(3)} ms)` },
        { name: `${label}: ClusterIP connect+request rate`, value: Math.round(rps), unit: `req/s (direct to its 10 pods in turn ${Math.round(rpsDirect)} req/s)`, ratio: Number((rps / rpsDirect).toFixed(3)), target: '>= 0.95x direct', ok: rps / rpsDirect >= 0.95 },
        { name: `${label}: one-rule DNAT connect+request rate (the DNAT + conntrack floor)`, value: Math.round(med(plain.map((p) => p.rps))), unit: `req/s (weft's ClusterIP / this: ${(rps / med(plain.map((p) => p.rps))).toFixed(3)})`, ratio: Number((med(plain.map((p) => p.rps)) / rpsDirect).toFixed(3)) },
        { name: `${label}: one-rule DNAT + masquerade connect+request rate`, value: Math.round(med(masq.map((p) => p.rps))), unit: `req/s (weft's ClusterIP / this: ${(rps / med(masq.map((p) => p.rps))).toFixed(3)})`, ratio: Number((med(masq.map((p) => p.rps)) / rpsDirect).toFixed(3)) },
        ...(await bulkRows(ns.name, serverNs, label, [
          { label: 'via the ClusterIP', host: clusterIP(last) }, { label: 'one-rule DNAT', host: PLAIN_DNAT },
          { label: 'one-rule DNAT + masquerade', host: PLAIN_MASQ }, { label: 'direct to the pod', host: SERVER_IPS[0] as string },
        ], 'direct to the pod')),
      );
    }
    return rows;
  } finally {
    proxy?.stop();
    server?.stop();
    ns.destroySync();
  }
}

/** Rendered content (no kernel) at 1,000 Services x 10 endpoints (3 on this node) of each kind: chains and rules of their own, and elements. */
function kindCounts(): BenchResult[] {
  const node = { nodeName: 'bench', clusterCidrs: ['10.100.0.0/14'], nodePortAddresses: [] };
  const kinds: Array<[string, NonNullable<Service['spec']>]> = [
    ['ClusterIP', {}], ['NodePort', { type: 'NodePort' }], ['NodePort ETP Local', { type: 'NodePort', externalTrafficPolicy: 'Local' }], ['ClientIP affinity', { sessionAffinity: 'ClientIP' }],
  ];
  return kinds.map(([kind, extra]) => {
    const svcs = Array.from({ length: 1000 }, (_, s) => { const x = service(s); return { ...x, spec: { ...x.spec, ...extra, ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30000 + s }] } }; });
    const slices = new Map(Array.from({ length: 1000 }, (_, s) => {
      const sl = slice(s, 10, 0);
      (sl.endpoints ?? []).forEach((e, i) => { e.nodeName = i < 3 ? 'bench' : 'other'; });
      return [`bench/s${s}`, [sl]] as [string, EndpointSlice[]];
    }));
    const c = renderAll(allUnits(svcs, (k) => slices.get(k) ?? [], node), node);
    const elements = [...c.elements.values()].reduce((n, m) => n + m.size, 0) + [...c.epMaps.values()].reduce((n, m) => n + m.endpoints.length, 0);
    const rules = [...c.chains.values()].reduce((n, x) => n + x.rules.length, 0);
    return { name: `weft 1,000 ${kind} Services x 10 endpoints (3 local): chains of their own`, value: c.chains.size, unit: `chains, ${rules} rules, ${elements} elements` };
  });
}

/** The benchmark's rows. */
export async function benchServices(): Promise<BenchResult[]> {
  const out: BenchResult[] = [];
  const report = (rows: BenchResult[]) => {
    for (const r of rows) process.stderr.write(`    ${r.name}: ${r.value} ${r.unit}\n`);
    out.push(...rows);
  };
  report(kindCounts());
  for (const n of SIZES) {
    process.stderr.write(`  services: ${n} x 10 endpoints\n`);
    report(await one(n, 10, `weft ${n} Services x 10 endpoints`, true));
  }
  if (BIG > 0) {
    process.stderr.write(`  services: 1 x ${BIG} endpoints\n`);
    report(await one(1, BIG, `weft 1 Service x ${BIG} endpoints`, false));
  }
  // WEFT_BENCH_SVC_PEERS=all (or a list of peers): weftd and kube-proxy side by side, services-peers.ts.
  if ((process.env['WEFT_BENCH_SVC_PEERS'] ?? '0') !== '0') out.push(...(await benchServicePeers()));
  return out;
}

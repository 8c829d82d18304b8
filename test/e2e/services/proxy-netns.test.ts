// The Service proxy against the kernel in a namespace of the test's, with in-memory informers: a
// restart changes nothing, a refused transaction is retried as a full sync that repairs drift.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAgentLog, type AgentLog } from '../../../agent/log.ts';
import { Metrics } from '../../../agent/metrics.ts';
import { SM } from '../../../agent/services/metrics.ts';
import { ServiceProxy } from '../../../agent/services/proxy.ts';
import type { EndpointSlice, Service } from '../../../agent/services/types.ts';
import { waitFor } from '../../../testkit/cluster.ts';
import { FakeInformer } from '../../../testkit/fake-informer.ts';
import { createTestNetns, rootOnly, run } from '../../../testkit/netns.ts';
import { parseSvcListing, readSvcTable } from '../../../agent/services/kernel.ts';
import { listJsonOrNull } from '../../../lib/netfilter/list-json.ts';
import { checkServicesOnNode } from '../../../cli/doctor/check-services.ts';
import { plainKernelContent } from '../../../testkit/kernel-content.ts';

function objects(n: number): { svcs: Service[]; slices: EndpointSlice[] } {
  const svcs: Service[] = [];
  const slices: EndpointSlice[] = [];
  for (let i = 0; i < n; i++) {
    svcs.push({ metadata: { name: `s${i}`, namespace: 't' }, spec: { clusterIP: `10.96.0.${i + 1}`, ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } });
    slices.push(slice(i, [`10.244.1.${i + 1}`, `10.244.2.${i + 1}`]));
  }
  return { svcs, slices };
}

function slice(i: number, ips: string[]): EndpointSlice {
  return { metadata: { name: `s${i}-x`, namespace: 't', labels: { 'kubernetes.io/service-name': `s${i}` } }, addressType: 'IPv4',
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })), ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] };
}

/** A log that also keeps the 'service table synced' records. */
function capture(): { log: AgentLog; synced: Array<Record<string, unknown>> } {
  const base = createAgentLog('error');
  const synced: Array<Record<string, unknown>> = [];
  return { synced, log: { ...base, info: (msg, f) => { if (msg === 'service table synced') synced.push(f ?? {}); } } };
}

void describe('ServiceProxy in a namespace', rootOnly(), () => {
  it('a restarted proxy finds the table as it wants it and changes no element or chain', async () => {
    const ns = await createTestNetns('wsvcp');
    try {
      const { svcs, slices } = objects(20);
      const a = capture();
      const p1 = new ServiceProxy({ services: new FakeInformer(svcs), slices: new FakeInformer(slices), node: { nodeName: 'n1', clusterCidrs: ['10.244.0.0/16'], nodePortAddresses: [] }, log: a.log, metrics: new Metrics(), nft: { netnsPath: ns.path } });
      await p1.start();
      p1.stop();
      assert.ok(Number(a.synced[0]?.commands) > 40);
      const b = capture();
      const m = new Metrics();
      const p2 = new ServiceProxy({ services: new FakeInformer(svcs), slices: new FakeInformer(slices), node: { nodeName: 'n1', clusterCidrs: ['10.244.0.0/16'], nodePortAddresses: [] }, log: b.log, metrics: m, nft: { netnsPath: ns.path } });
      await p2.start();
      p2.stop();
      assert.equal(b.synced[0]?.commands, 0);
      assert.equal(m.get(SM.services), 20);
      assert.equal(m.get(SM.endpoints), 40);
      assert.equal(m.get(SM.syncs, { kind: 'full' }), 1);
      // Start-up is not a change: no latency is observed for it.
      assert.equal(m.get(SM.latencyCount), 0);
    } finally {
      await ns.destroy();
    }
  });

  it('a transaction refused because the table drifted is retried as a full sync that repairs it', async () => {
    const ns = await createTestNetns('wsvcp');
    try {
      const { svcs, slices } = objects(3);
      const sliceInf = new FakeInformer(slices);
      const metrics = new Metrics();
      const p = new ServiceProxy({ services: new FakeInformer(svcs), slices: sliceInf, node: { nodeName: 'n1', clusterCidrs: [], nodePortAddresses: [] }, log: createAgentLog('error'), metrics, nft: { netnsPath: ns.path } });
      await p.start();
      // Someone deletes an element of ours; the next incremental change to s1 deletes it too and is refused (ENOENT).
      await run(['ip', 'netns', 'exec', ns.name, 'nft', 'delete element inet weft-svc hairpin4 { 10.244.1.2 . 10.244.1.2 }']);
      sliceInf.modify(slice(1, ['10.244.1.99']));
      await waitFor('retry repaired', () => metrics.get(SM.syncs, { kind: 'full' }) >= 2, 10_000);
      p.stop();
      assert.ok(metrics.get(SM.failures) >= 1);
      // The change's latency counts from when it was seen to when the retry programmed it.
      assert.equal(metrics.get(SM.latencyCount), 1);
      assert.match(metrics.format(), /weftd_service_sync_latency_seconds_bucket\{le="\+Inf"\} 1/);
      const after = (await run(['ip', 'netns', 'exec', ns.name, 'nft', 'list', 'table', 'inet', 'weft-svc'])).stdout;
      assert.match(after, /10\.244\.1\.99 \. 8080/);
    } finally {
      await ns.destroy();
    }
  });

  it('endpoint and count changes of a ClusterIP Service are element-only over netlink (no nft); the kernel agrees', async () => {
    const ns = await createTestNetns('wsvcp');
    try {
      const { svcs, slices } = objects(2);
      const sliceInf = new FakeInformer(slices);
      const metrics = new Metrics();
      let done: (() => void) | undefined;
      const p = new ServiceProxy({ services: new FakeInformer(svcs), slices: sliceInf, node: { nodeName: 'n1', clusterCidrs: ['10.244.0.0/16'], nodePortAddresses: [] }, log: createAgentLog('error'), metrics, nft: { netnsPath: ns.path }, onUnits: () => done?.() });
      await p.start();
      const change = async (ips: string[]) => {
        const programmed = new Promise<void>((r) => { done = r; });
        sliceInf.modify(slice(1, ips));
        await programmed;
        return p.lastPath;
      };
      const list = async () => (await run(['ip', 'netns', 'exec', ns.name, 'nft', 'list', 'table', 'inet', 'weft-svc'])).stdout;
      const slots = (text: string) => [...text.matchAll(/10\.96\.0\.2 \. 80 \. (\d+) : ([\d.]+) \. 8080/g)].map((m) => `${m[1]}=${m[2]}`).sort();
      assert.equal(await change(['10.244.1.2', '10.244.3.3']), 'netlink');
      assert.deepEqual(slots(await list()), ['0=10.244.1.2', '1=10.244.3.3']);
      assert.equal(await change(['10.244.3.3']), 'netlink', '2 -> 1 endpoint keeps capacity 2');
      assert.equal(await change(['10.244.3.3', '10.244.4.4', '10.244.5.5']), 'netlink', 'capacity 2 -> 4: the address moves to the next shared chain');
      const text = await list();
      assert.match(text, /10\.96\.0\.2 \. tcp \. 80 : goto svcc4t-4/);
      assert.deepEqual(slots(text), ['0=10.244.3.3', '1=10.244.4.4', '2=10.244.5.5']);
      assert.equal(metrics.get(SM.syncs, { kind: 'elements' }), 3);
      assert.equal(metrics.get(SM.failures), 0);
      assert.equal(metrics.get(SM.endpoints), 5);
      p.stop();
      // What the incremental path assumed is what a full listing finds: a restart changes nothing.
      const b = capture();
      const p2 = new ServiceProxy({ services: new FakeInformer(svcs), slices: sliceInf, node: { nodeName: 'n1', clusterCidrs: ['10.244.0.0/16'], nodePortAddresses: [] }, log: b.log, metrics: new Metrics(), nft: { netnsPath: ns.path } });
      await p2.start();
      p2.stop();
      assert.equal(b.synced[0]?.commands, 0);
    } finally {
      await ns.destroy();
    }
  });

  it('NodePort, ETP Local and ClientIP affinity Services: no chain of their own; a restart changes nothing; their endpoint changes are element-only', async () => {
    const ns = await createTestNetns('wsvcp');
    try {
      const kinds: Array<NonNullable<Service['spec']>> = [
        { type: 'NodePort' }, { type: 'LoadBalancer', externalIPs: ['192.0.2.9'], externalTrafficPolicy: 'Local' },
        { type: 'NodePort', sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } },
      ];
      const svcs: Service[] = kinds.map((spec, i) => ({ metadata: { name: `s${i}`, namespace: 't' }, spec: { ...spec, clusterIP: `10.96.0.${i + 1}`, ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 + i }] } }));
      const slices = kinds.map((_, i) => slice(i, [`10.244.1.${i + 1}`, `10.244.2.${i + 1}`]));
      slices.forEach((s) => { for (const e of s.endpoints ?? []) e.nodeName = e.addresses[0]?.startsWith('10.244.1.') === true ? 'n1' : 'n2'; });
      const sliceInf = new FakeInformer(slices);
      const node = { nodeName: 'n1', clusterCidrs: ['10.244.0.0/16'], nodePortAddresses: [] };
      let done: (() => void) | undefined;
      const metrics = new Metrics();
      const p = new ServiceProxy({ services: new FakeInformer(svcs), slices: sliceInf, node, log: createAgentLog('error'), metrics, nft: { netnsPath: ns.path }, onUnits: () => done?.() });
      await p.start();
      const table = readSvcTable({ netnsPath: ns.path });
      assert.deepEqual([...(table?.allChains ?? [])].filter((n) => n.startsWith('affrec')), ['affrec4-60']);
      assert.deepEqual([...(table?.epMaps.get('epnl4t/30081')?.values() ?? [])], ['10.244.1.2 . 8080']);
      for (const i of [0, 1, 2]) {
        const programmed = new Promise<void>((r) => { done = r; });
        // Two endpoints again: the capacity is what a restart computes too (no hysteresis element to rewrite).
        sliceInf.modify(slice(i, [`10.244.3.${i + 1}`, `10.244.4.${i + 1}`]));
        await programmed;
        assert.equal(p.lastPath, 'netlink', `s${i}`);
      }
      assert.equal(metrics.get(SM.failures), 0);
      p.stop();
      const b = capture();
      const p2 = new ServiceProxy({ services: new FakeInformer(svcs), slices: sliceInf, node, log: b.log, metrics: new Metrics(), nft: { netnsPath: ns.path } });
      await p2.start();
      p2.stop();
      assert.equal(b.synced[0]?.commands, 0);
      const text = (await run(['ip', 'netns', 'exec', ns.name, 'nft', 'list', 'map', 'inet', 'weft-svc', 'epn4t'])).stdout;
      assert.match(text, /30082 \. 0 : 10\.244\.3\.3 \. 8080/);
    } finally {
      await ns.destroy();
    }
  });

  it('weft doctor\'s services check agrees with the kernel weftd programmed, and sees an endpoint deleted behind its back', async () => {
    const ns = await createTestNetns('wsvcp');
    try {
      const { svcs, slices } = objects(3);
      const sliceInf = new FakeInformer(slices);
      let done: (() => void) | undefined;
      const p = new ServiceProxy({ services: new FakeInformer(svcs), slices: sliceInf, node: { nodeName: 'n1', clusterCidrs: ['10.244.0.0/16'], nodePortAddresses: [] }, log: createAgentLog('error'), metrics: new Metrics(), nft: { netnsPath: ns.path }, onUnits: () => done?.() });
      await p.start();
      // Four endpoints, then two: capacity 4 is kept for two (weftd's hysteresis), which the check must accept.
      for (const ips of [['10.244.1.2', '10.244.2.2', '10.244.3.2', '10.244.4.2'], ['10.244.1.2', '10.244.4.2']]) {
        const programmed = new Promise<void>((r) => { done = r; });
        sliceInf.modify(slice(1, ips));
        await programmed;
      }
      p.stop();
      const sources = { env: { NODE_NAME: 'n1' }, list: () => Promise.resolve({ services: svcs, slices: sliceInf.list() }), read: () => readSvcTable({ netnsPath: ns.path }), clusterCidrs: ['10.244.0.0/16'] };
      const ok = await checkServicesOnNode(sources);
      assert.deepEqual(ok.problems, []);
      assert.equal(ok.facts.endpoints, 6);
      await run(['ip', 'netns', 'exec', ns.name, 'nft', 'delete element inet weft-svc ep4t { 10.96.0.1 . 80 . 0 }']);
      const bad = await checkServicesOnNode(sources);
      assert.equal(bad.problems.length, 1, JSON.stringify(bad.problems));
      assert.match(bad.problems[0]?.detail ?? '', /endpoints differ/);
    } finally {
      await ns.destroy();
    }
  });

  it('the table read over netlink (elements) and `nft -j -t` (structure) equals the full `nft -j` listing: IPv4, IPv6, NodePorts, slots, hairpin, pinned clients', async () => {
    const ns = await createTestNetns('wsvcp');
    try {
      const v6: Service = { metadata: { name: 's6', namespace: 't' }, spec: { type: 'NodePort', clusterIP: 'fd00:96::a', clusterIPs: ['fd00:96::a'], ipFamilies: ['IPv6'], ports: [{ name: 'http', port: 80, protocol: 'UDP', nodePort: 30090 }] } };
      const v6Slice: EndpointSlice = { metadata: { name: 's6-x', namespace: 't', labels: { 'kubernetes.io/service-name': 's6' } }, addressType: 'IPv6',
        endpoints: [{ addresses: ['fd00:244:1::5'], conditions: { ready: true } }, { addresses: ['fd00:244:2::5'], conditions: { ready: true } }], ports: [{ name: 'http', port: 5353, protocol: 'UDP' }] };
      const { svcs, slices } = objects(30);
      const aff = svcs[3]!;
      aff.spec = { ...aff.spec, type: 'NodePort', sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } };
      const p = new ServiceProxy({ services: new FakeInformer([...svcs, v6]), slices: new FakeInformer([...slices, v6Slice]), node: { nodeName: 'n1', clusterCidrs: ['10.244.0.0/16', 'fd00:244::/48'], nodePortAddresses: [] }, log: createAgentLog('error'), metrics: new Metrics(), nft: { netnsPath: ns.path } });
      await p.start();
      p.stop();
      // A client pinned by the packet path (here added by hand, as the kernel's dynamic update would).
      const pin = await run(['ip', 'netns', 'exec', ns.name, 'nft', 'add', 'element', 'inet', 'weft-svc', 'aff4', '{ 192.0.2.1 . 10.96.0.4 . tcp . 80 : 10.244.1.4 . 8080 }']);
      assert.equal(pin.code, 0, pin.stderr);
      const viaNetlink = readSvcTable({ netnsPath: ns.path });
      const full = listJsonOrNull(['table', 'inet', 'weft-svc'], { netnsPath: ns.path });
      assert.ok(viaNetlink !== null && full !== null);
      assert.deepEqual(plainKernelContent(viaNetlink), plainKernelContent(parseSvcListing(full)));
      assert.equal(viaNetlink.elements.get('svc6')?.size, 1);
      assert.equal(viaNetlink.elements.get('hairpin6')?.size, 2);
      assert.ok(viaNetlink.epMaps.size >= 31);
      assert.deepEqual([...(viaNetlink.affinity.get('10.96.0.4 . tcp . 80')?.clients ?? [])], [['192.0.2.1 . 10.96.0.4 . tcp . 80', '10.244.1.4 . 8080']]);
      assert.equal((await run(['ip', 'netns', 'exec', ns.name, 'nft', 'delete', 'table', 'inet', 'weft-svc'])).code, 0);
      assert.equal(readSvcTable({ netnsPath: ns.path }), null, 'no table: null');
    } finally {
      await ns.destroy();
    }
  });
});

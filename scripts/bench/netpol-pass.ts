// One weftd policy pass alone, in this process (no kernel, no API server; runs anywhere): the netpol
// bench's cluster (1,000 pods in 10 namespaces, 201 policies, half the pods on this node) in the
// incremental model, a label change between passes, and what each pass costs: the model's table
// (IncrementalPolicy.desired) and the element diff against the last table (elementOnlyDelta), p50/p99.
// `node --import tsx scripts/bench/netpol-pass.ts [passes]`.
import { IncrementalPolicy } from '../../agent/policy/incremental.ts';
import type { PolicyCompileCache } from '../../agent/policy/desired.ts';
import { elementOnlyDelta } from '../../lib/netfilter/table-elem-diff.ts';
import { namespaceLabels, trimPod, trimPolicy, type PodInfo } from '../../agent/policy/types.ts';
import { policyIsLocal } from '../../agent/policy/node.ts';
import { median, quantile, round } from './util.ts';

const PASSES = Number(process.argv[2] ?? 200);
// weftd's own test (a pod of the other node parses the lease subnet and the pod's addresses), memoised per pod object as the controller does unless WEFT_BENCH_NO_MEMO is set.
const memo = new WeakMap<PodInfo, boolean>();
const isLocalRaw = (p: PodInfo): boolean => policyIsLocal(p, '10.244.1.0/24', '192.0.2.1');
const isLocal = process.env['WEFT_BENCH_NO_MEMO'] !== undefined ? isLocalRaw : (p: PodInfo): boolean => { let v = memo.get(p); if (v === undefined) memo.set(p, (v = isLocalRaw(p))); return v; };
const m = new IncrementalPolicy();
const cache: PolicyCompileCache = new Map();
for (let i = 0; i < 10; i++) { const n = namespaceLabels({ metadata: { name: `ns-${i}`, labels: { team: `t${i % 3}` } } }); m.putNamespace(n.name, n.labels); }
const raw = (i: number, labels: Record<string, string>): unknown => ({
  metadata: { namespace: `ns-${i % 10}`, name: `p${i}`, labels }, spec: { containers: [{ ports: [{ name: 'http', containerPort: 8000 + (i % 7) }] }] },
  status: { phase: 'Running', podIP: `10.244.${100 + (i >> 8)}.${i & 255}`, hostIP: i % 2 === 0 ? '192.0.2.1' : '192.0.2.2' },
});
for (let i = 0; i < 1000; i++) { const p = trimPod(raw(i, { app: `app-${i % 50}`, tier: `t${i % 3}` })); if (p !== undefined) m.putPod(`ns-${i % 10}/p${i}`, p); }
for (let j = 0; j < 200; j++) {
  m.putPolicy(`ns-${j % 10}/pol-${j}`, trimPolicy({ metadata: { namespace: `ns-${j % 10}`, name: `pol-${j}` }, spec: {
    podSelector: { matchLabels: { app: `app-${j % 50}` } },
    ingress: [{ from: [{ podSelector: { matchLabels: { tier: `t${j % 3}` } } }, { namespaceSelector: { matchLabels: { team: `t${j % 3}` } }, podSelector: { matchLabels: { role: 'in' } } }], ports: [{ port: 80 }, { port: 'http' }] }],
  } }));
}
m.putPolicy('ns-0/probe', trimPolicy({ metadata: { namespace: 'ns-0', name: 'probe' }, spec: { podSelector: { matchLabels: { app: 'app-0' } }, ingress: [{ from: [{ podSelector: { matchLabels: { role: 'in' } } }] }] } }));
const addrs = ['10.244.1.1'];
let held = m.full(addrs, isLocal, cache).content;
const model: number[] = [];
const diff: number[] = [];
for (let k = 0; k < PASSES; k++) {
  const i = (k * 10) % 1000;
  const p = trimPod(raw(i, { app: 'none', ...(k % 2 === 0 ? { role: 'in' } : {}) }));
  if (p !== undefined) m.putPod(`ns-${i % 10}/p${i}`, p);
  const t0 = performance.now();
  const d = m.desired(addrs, isLocal, cache);
  const t1 = performance.now();
  const delta = elementOnlyDelta(held, d.content);
  const t2 = performance.now();
  if (delta === null) throw new Error('a label change should be an element change');
  held = d.content;
  model.push(t1 - t0);
  diff.push(t2 - t1);
}
const f = (xs: number[]): string => `p50 ${round(median(xs), 2)} ms, p99 ${round(quantile(xs, 0.99), 2)} ms`;
process.stdout.write(`${PASSES} passes: model ${f(model)}; element diff ${f(diff)}\n`);

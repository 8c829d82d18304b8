// The sliced model check (agent/policy/model-check.ts): equal on the incremental model's own table,
// a difference named when a set of that table is wrong or stale, and slices that leave the event
// loop free and stop once the work is stale.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { modelCheckSteps, runSliced } from '../../../../agent/policy/model-check.ts';
import { IncrementalPolicy } from '../../../../agent/policy/incremental.ts';
import { SET_ISO_IN, type PolicyCompileCache } from '../../../../agent/policy/desired.ts';
import { namespaceLabels, trimPod, trimPolicy, type PodInfo } from '../../../../agent/policy/types.ts';

const isLocal = (p: PodInfo): boolean => p.hostIP === '192.0.2.1';
const ADDRS = ['10.0.9.1'];

function model(): { m: IncrementalPolicy; cache: PolicyCompileCache } {
  const m = new IncrementalPolicy();
  for (const ns of ['a', 'b']) {
    const n = namespaceLabels({ metadata: { name: ns, labels: { team: ns === 'a' ? 'x' : 'y' } } });
    m.putNamespace(n.name, n.labels);
  }
  for (let i = 0; i < 40; i++) {
    const ns = i % 2 === 0 ? 'a' : 'b';
    const p = trimPod({ metadata: { namespace: ns, name: `p${i}`, labels: { app: `app${i % 4}`, ...(i % 3 === 0 ? { role: 'in' } : {}) } }, spec: { containers: [{ ports: [{ name: 'web', containerPort: 80 + (i % 2) }] }] }, status: { phase: 'Running', podIP: `10.0.0.${i + 1}`, hostIP: i % 2 === 0 ? '192.0.2.1' : '192.0.2.2' } });
    if (p !== undefined) m.putPod(`${ns}/p${i}`, p);
  }
  for (let j = 0; j < 6; j++) {
    const ns = j % 2 === 0 ? 'a' : 'b';
    m.putPolicy(`${ns}/pol${j}`, trimPolicy({ metadata: { namespace: ns, name: `pol${j}` }, spec: {
      podSelector: { matchLabels: { app: `app${j % 4}` } },
      ingress: [{ from: [{ podSelector: { matchLabels: { role: 'in' } } }, { namespaceSelector: { matchLabels: { team: 'x' } } }, { ipBlock: { cidr: '10.1.0.0/16', except: ['10.1.2.0/24'] } }], ports: [{ port: 'web' }] }],
    } }));
  }
  return { m, cache: new Map() };
}

function finish<R>(g: Generator<void, R>): R {
  for (;;) {
    const r = g.next();
    if (r.done === true) return r.value;
  }
}

void describe('modelCheckSteps', () => {
  it('finds the incremental table equal, and so the full recompute', () => {
    const { m, cache } = model();
    const d = m.desired(ADDRS, isLocal, cache);
    assert.equal(finish(modelCheckSteps(m, d, cache)), undefined);
    const full = m.full(ADDRS, isLocal, cache);
    assert.equal(finish(modelCheckSteps(m, full, cache)), undefined);
  });

  it('names a set of the table that lacks an element', () => {
    const { m, cache } = model();
    const d = m.desired(ADDRS, isLocal, cache);
    const [name, set] = [...d.content.sets].find(([n, s]) => n.startsWith('s-') && s.elements.size > 0) ?? [];
    assert.ok(name !== undefined && set !== undefined);
    // The table is the model's own: a copy with one element less stands for a set the model got wrong.
    const fewer = new Map(d.content.sets).set(name, { ...set, elements: new Set([...set.elements].slice(1)) });
    const wrong = { ...d, content: { ...d.content, sets: fewer } };
    assert.match(finish(modelCheckSteps(m, wrong, cache)) ?? '', new RegExp(`^set ${name}:`));
  });

  it('finds a table stale once the model moved on without a pass', () => {
    const { m, cache } = model();
    const d = m.desired(ADDRS, isLocal, cache);
    const p = m.pod('a/p2');
    assert.ok(p !== undefined);
    m.putPod('a/p2', { ...p, labels: { ...p.labels, role: 'in' } });
    assert.match(finish(modelCheckSteps(m, d, cache)) ?? '', /^set /);
  });

  it('the fixed sets are not asked for by a policy, and are not reported as extra', () => {
    const { m, cache } = model();
    const d = m.desired(ADDRS, isLocal, cache);
    assert.ok(d.content.sets.has(SET_ISO_IN));
    const extra = { ...d, content: { ...d.content, sets: new Map(d.content.sets).set('s-000000000000', { spec: { type: 'ipv4_addr' as const }, elements: new Set<string>() }) } };
    assert.match(finish(modelCheckSteps(m, extra, cache)) ?? '', /s-000000000000: no policy asks for it/);
  });
});

void describe('runSliced', () => {
  function* busy(steps: number, msEach: number): Generator<void, number> {
    for (let i = 0; i < steps; i++) {
      const t = performance.now();
      while (performance.now() - t < msEach) { /* spin */ }
      yield;
    }
    return steps;
  }

  it('runs the steps in slices with the event loop free between them', async () => {
    let ranBetween = 0;
    const tick = (): void => { ranBetween++; };
    setImmediate(tick);
    const r = await runSliced(busy(30, 1), 4, () => { setImmediate(tick); return true; });
    assert.ok(r !== undefined);
    assert.equal(r.value, 30);
    assert.ok(r.slices >= 5, `slices ${r.slices}`);
    assert.ok(ranBetween >= r.slices - 1, `between ${ranBetween}, slices ${r.slices}`);
  });

  it('stops when the work turns stale', async () => {
    let n = 0;
    const r = await runSliced(busy(30, 1), 4, () => ++n < 2);
    assert.equal(r, undefined);
    assert.equal(n, 2);
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { desiredPolicy, type DesiredPolicy } from '../../../../agent/policy/desired.ts';
import { IncrementalPolicy } from '../../../../agent/policy/incremental.ts';
import { namespaceLabels, trimPod, trimPolicy, type PodInfo } from '../../../../agent/policy/types.ts';

/** A small deterministic PRNG, so that a failing seed can be run again. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32; };
}

/** Sets compared as sets, everything else as the full recompute lays it out. */
function canon(d: DesiredPolicy): unknown {
  return {
    sets: [...d.content.sets].map(([n, s]) => [n, s.spec, [...s.elements].sort()]),
    chains: [...d.content.chains].map(([n, c]) => [n, c.base, c.rules.map((r) => r.text)]),
    counters: [...(d.content.counters ?? [])], plans: d.plans, isolated: d.isolated, rules: d.rules, local: d.local,
  };
}

const NS = ['a', 'b', 'c'];
const LABELS = ['app', 'tier', 'role'];
const isLocal = (p: PodInfo): boolean => p.hostIP === '192.0.2.1';

void describe('IncrementalPolicy', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`equals the full recompute after each of 150 random events (seed ${seed})`, () => {
      const r = rng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
      const labels = (): Record<string, string> => Object.fromEntries(LABELS.filter(() => r() < 0.6).map((k) => [k, pick(['x', 'y', 'z'])]));
      const sel = (): Record<string, unknown> => (r() < 0.5 ? { matchLabels: labels() } : { matchExpressions: [{ key: pick(LABELS), operator: pick(['In', 'NotIn', 'Exists', 'DoesNotExist']), values: ['x', 'y'] }] });
      const m = new IncrementalPolicy();
      const cache = new Map();
      for (let i = 0; i < 150; i++) {
        const what = r();
        const ns = pick(NS);
        if (what < 0.45) {
          const name = `p${Math.floor(r() * 12)}`;
          const ip = r() < 0.1 ? `fd00::${Math.floor(r() * 20) + 1}` : `10.0.0.${Math.floor(r() * 30) + 1}`;
          const raw = { metadata: { namespace: ns, name, labels: labels() }, spec: { containers: [{ ports: r() < 0.5 ? [{ name: 'web', containerPort: 80 + Math.floor(r() * 3) }] : [] }] }, status: { phase: 'Running', podIP: ip, hostIP: r() < 0.5 ? '192.0.2.1' : '192.0.2.2' } };
          const p = trimPod(raw);
          if (p === undefined || r() < 0.15) m.deletePod(`${ns}/${name}`);
          else m.putPod(`${ns}/${name}`, p);
        } else if (what < 0.6) {
          const n = namespaceLabels({ metadata: { name: ns, labels: labels() } });
          m.putNamespace(n.name, r() < 0.1 ? undefined : n.labels);
        } else {
          const name = `pol${Math.floor(r() * 6)}`;
          if (r() < 0.25) m.deletePolicy(`${ns}/${name}`);
          else {
            const peer = (): Record<string, unknown> => pick([{ podSelector: sel() }, { namespaceSelector: sel() }, { namespaceSelector: sel(), podSelector: sel() }, { ipBlock: { cidr: '10.0.0.0/28', except: ['10.0.0.8/30'] } }]);
            const ports = pick([undefined, [{ port: 'web' }], [{ port: 80, protocol: 'TCP' }]]);
            m.putPolicy(`${ns}/${name}`, trimPolicy({ metadata: { namespace: ns, name }, spec: {
              podSelector: sel(), ingress: [{ from: [peer(), peer()], ...(ports !== undefined ? { ports } : {}) }],
              ...(r() < 0.5 ? { egress: [{ to: [peer()], ...(ports !== undefined ? { ports } : {}) }] } : {}),
            } }));
          }
        }
        // Passes are not taken after every event: changes between two passes coalesce, as in weftd.
        if (r() < 0.5) continue;
        const inc = m.desired(['10.0.0.254'], isLocal, cache);
        const full = desiredPolicy(m.world(['10.0.0.254'], isLocal));
        assert.deepEqual(canon(inc), canon(full), `seed ${seed}, event ${i}`);
      }
    });
  }

  it('fills again only the sets of a changed scope (the others are the same objects)', () => {
    const m = new IncrementalPolicy();
    const pod = (name: string, ip: string, role: string): PodInfo => {
      const p = trimPod({ metadata: { namespace: 'a', name, labels: { role } }, status: { podIP: ip, hostIP: '192.0.2.1' } });
      assert.ok(p);
      return p;
    };
    m.putPod('a/one', pod('one', '10.0.0.1', 'web'));
    m.putPod('a/two', pod('two', '10.0.0.2', 'db'));
    m.putPolicy('a/p', trimPolicy({ metadata: { namespace: 'a', name: 'p' }, spec: { podSelector: { matchLabels: { role: 'db' } }, ingress: [{ from: [{ podSelector: { matchLabels: { role: 'web' } } }, { podSelector: { matchLabels: { role: 'api' } } }] }] } }));
    const d1 = m.desired([], isLocal, new Map());
    m.putPod('a/three', pod('three', '10.0.0.3', 'web'));
    const d2 = m.desired([], isLocal, new Map());
    const changed = [...d2.content.sets].filter(([n, s]) => d1.content.sets.get(n) !== s).map(([n]) => n);
    const web = [...d2.content.sets].find(([, s]) => s.elements.has('10.0.0.3'))?.[0];
    assert.ok(web);
    // The fixed sets and the group maps are laid out on every pass.
    assert.deepEqual(changed.filter((n) => !/^(iso-|node-|in-groups|eg-groups)/.test(n)), [web]);
    assert.deepEqual([...(d2.content.sets.get(web)?.elements ?? [])].sort(), ['10.0.0.1', '10.0.0.3']);
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Rtnl } from '../../../../lib/netlink/index.ts';
import { applyPlanSlices } from '../../../../agent/reconcile/apply.ts';
import type { Op, Plan } from '../../../../agent/reconcile/diff.ts';

const busy = (ms: number) => { const end = performance.now() + ms; while (performance.now() < end) { /* one slow netlink request */ } };

/** An Rtnl whose neighbour adds each take `ms` and are recorded by address. */
function slowRtnl(ms: number, added: string[]): Rtnl {
  return { addNeigh: (n: { ip: string }) => { busy(ms); added.push(n.ip); } } as unknown as Rtnl;
}

function neighPlan(n: number): Plan {
  const ops: Op[] = Array.from({ length: n }, (_, i): Op => ({ kind: 'add-neigh', want: { ip: `10.0.${i}.0`, mac: '02:00:00:00:00:01' }, replace: false }));
  return { ops, conflicts: [], adopted: [], inPlace: 0 };
}

void describe('applyPlanSlices', () => {
  it('yields once a slice has run its budget, and applies every operation across the slices', () => {
    const added: string[] = [];
    const it = applyPlanSlices(slowRtnl(1, added), neighPlan(30), { uplink: 1, vtep: 2 }, {}, 5);
    const perSlice: number[] = [];
    for (;;) {
      const before = added.length;
      const r = it.next();
      perSlice.push(added.length - before);
      if (r.done === true) { assert.equal(r.value.applied.length, 30); break; }
    }
    assert.equal(added.length, 30);
    assert.ok(perSlice.length >= 4, `slices ${perSlice.join(',')}`);
    assert.ok(perSlice.every((n) => n <= 6), `slices ${perSlice.join(',')}`);
  });

  it('asks skip just before each operation and tells applied after each', () => {
    const added: string[] = [];
    const told: string[] = [];
    const touched = new Set<string>();
    const it = applyPlanSlices(slowRtnl(1, added), neighPlan(10), { uplink: 1, vtep: 2 }, {
      skip: (op) => op.kind === 'add-neigh' && touched.has(op.want.ip),
      applied: (op) => { if (op.kind === 'add-neigh') told.push(op.want.ip); },
    }, 2);
    it.next();
    // Touched while the pass was suspended: an operation not yet run is left out.
    touched.add('10.0.9.0');
    touched.add('10.0.0.0');
    let r = it.next();
    while (r.done !== true) r = it.next();
    assert.ok(added.includes('10.0.0.0'), 'ran before it was touched');
    assert.ok(!added.includes('10.0.9.0'));
    assert.deepEqual(told, added);
    assert.equal(r.value.applied.length, 9);
  });
});

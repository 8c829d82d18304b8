// The fuzz machinery itself (no root, no plugin runs): cases are reproducible from (seed, index),
// mutations follow the schema, and expectations come from the skeleton's rules and the validator.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectFor, makeCase, type CaseContext } from './cases.ts';
import { makeRng } from './prng.ts';
import { applyMutation, collectTargets, drawMutation } from './schema-mutate.ts';
import { FUZZ_TARGETS, schemaOf, validatorOf } from './targets.ts';

const ctx: CaseContext = {
  dataDir: '/tmp/x/ipam', podNetns: '/run/netns/pod', octet: 100, scratch: '/tmp/x/s', distBin: '/tmp/x/bin',
  nodeName: 'node', fifo: '/tmp/x/fifo', symlink: '/tmp/x/link',
};

describe('fuzz cases', () => {
  test('case i of seed s is always the same case; neighbours differ', async () => {
    for (const t of FUZZ_TARGETS) {
      const schema = schemaOf(t);
      const validate = await validatorOf(t);
      const a = makeCase(t, schema, validate, ctx, 1234, 7);
      const b = makeCase(t, schema, validate, ctx, 1234, 7);
      assert.deepEqual(a, b, t.name);
      const labels = new Set(Array.from({ length: 30 }, (_, i) => makeCase(t, schema, validate, ctx, 1234, i).label));
      assert.ok(labels.size > 15, `${t.name}: only ${labels.size} distinct cases in 30`);
    }
  });

  test('the walk reaches nested schema fields and array elements', () => {
    const t = FUZZ_TARGETS.find((x) => x.name === 'host-local');
    assert.ok(t);
    const paths = collectTargets(schemaOf(t), t.baseConfig(ctx)).map((x) => x.path.join('.'));
    for (const p of ['ipam.ranges.0.0.subnet', 'ipam.routes.0.dst', 'runtimeConfig.ips', 'cni.dev/valid-attachments']) assert.ok(paths.includes(p), p);
  });

  test('expectations: version rules first, then the validator', async () => {
    const t = FUZZ_TARGETS.find((x) => x.name === 'bridge');
    assert.ok(t);
    const v = await validatorOf(t);
    const base = t.baseConfig(ctx);
    assert.deepEqual(expectFor(t, v, { ...base, cniVersion: 1 }, 'cniVersion'), { ok: false, codes: [6] });
    assert.deepEqual(expectFor(t, v, { ...base, cniVersion: '9.0.0' }, 'cniVersion'), { ok: false, codes: [1] });
    assert.deepEqual(expectFor(t, v, { ...base, mtu: 'big' }, 'mtu'), { ok: false, codes: [7] });
    assert.equal(expectFor(t, v, base, '').ok, true);
    assert.deepEqual(expectFor(t, v, [base], ''), { ok: false, codes: [6] });
  });

  test('dataDir is never removed nor turned into a path trick', () => {
    const t = FUZZ_TARGETS.find((x) => x.name === 'host-local');
    assert.ok(t);
    const rng = makeRng(99);
    for (let i = 0; i < 3000; i++) {
      const m = drawMutation(rng, schemaOf(t), t.baseConfig(ctx));
      if (m.path.join('.') !== 'ipam.dataDir') continue;
      assert.notEqual(m.remove, true);
      assert.notEqual(typeof m.value, 'string', JSON.stringify(m));
      assert.notEqual(typeof applyMutation(t.baseConfig(ctx), m), 'undefined');
    }
  });
});

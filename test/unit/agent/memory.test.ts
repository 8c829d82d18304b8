// agent/memory.ts: which V8 flags weftd sets, and that this Node's V8 still honours the young
// generation's cap when it is set at run time (a Node upgrade that stops honouring it fails here).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { controllerMemoryFlags, memoryFlags } from '../../../agent/memory.ts';

describe('memoryFlags', () => {
  it('turns TurboFan off, caps the young generation and slows old-generation growth by default', () => {
    assert.deepEqual(memoryFlags([], ''), ['--no-turbofan', '--semi-space-growth-factor=1', '--heap-growing-percent=20']);
  });

  it("leaves what the user set on node's command line or in NODE_OPTIONS", () => {
    assert.deepEqual(memoryFlags(['--turbofan'], ''), ['--semi-space-growth-factor=1', '--heap-growing-percent=20']);
    assert.deepEqual(memoryFlags([], '--max-old-space-size=64 --max-semi-space-size=4'), ['--no-turbofan', '--heap-growing-percent=20']);
    assert.deepEqual(memoryFlags(['--semi-space-growth-factor=2'], '--heap-growing-percent=50 --opt'), []);
  });
});

describe('controllerMemoryFlags', () => {
  const applied = memoryFlags([], '');
  it('gives the young generation its default growth back with --service-proxy or --network-policy', () => {
    assert.deepEqual(controllerMemoryFlags({ serviceProxy: {} }, applied), ['--semi-space-growth-factor=2']);
    assert.deepEqual(controllerMemoryFlags({ networkPolicy: {} }, applied), ['--semi-space-growth-factor=2']);
  });
  it('sets nothing without a controller, or when the cap was not set', () => {
    assert.deepEqual(controllerMemoryFlags({}, applied), []);
    assert.deepEqual(controllerMemoryFlags({ serviceProxy: {} }, ['--no-turbofan']), []);
  });
});

describe('the young generation cap at run time', () => {
  // Allocates 200 MB of short-lived objects and prints the young generation's largest size (MiB).
  const script = (flags: string) => `
    const v8 = require('node:v8');
    if (${JSON.stringify(flags)}) v8.setFlagsFromString(${JSON.stringify(flags)});
    let max = 0, keep = [];
    for (let r = 0; r < 20; r++) {
      for (let i = 0; i < 100000; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 1000) keep = []; }
      const s = v8.getHeapSpaceStatistics().find((x) => x.space_name === 'new_space');
      max = Math.max(max, s.space_size / 1048576);
    }
    console.log(max);`;
  const youngMax = (flags: string) => Number(spawnSync(process.execPath, ['-e', script(flags)], { encoding: 'utf8' }).stdout.trim());

  it('keeps the young generation at its initial size, which V8 otherwise grows', () => {
    const capped = youngMax(memoryFlags([], '').join(' '));
    const free = youngMax('');
    assert.ok(capped <= 2, `capped young generation grew to ${capped} MiB`);
    assert.ok(free >= 4 * capped, `uncapped young generation ${free} MiB, capped ${capped} MiB: the cap is not what keeps it small`);
  });
});

describe('capYoungGeneration / paceYoungGeneration', () => {
  // Keeps 60 MB of objects alive (survivors grow the young generation) and prints its largest size (MiB).
  const script = (cap: number, paced = true) => `
    import { capYoungGeneration, paceYoungGeneration, setV8Flags } from ${JSON.stringify(new URL('../../../agent/memory.ts', import.meta.url).href)};
    import { getHeapSpaceStatistics } from 'node:v8';
    setV8Flags(['--semi-space-growth-factor=2']);
    if (${cap} > 0) capYoungGeneration(${cap});
    let max = 0;
    const keep = [];
    for (let r = 0; r < 300; r++) {
      for (let i = 0; i < 5000; i++) keep.push({ i, s: 'x' + i });
      if (${paced}) paceYoungGeneration();
      max = Math.max(max, getHeapSpaceStatistics().find((x) => x.space_name === 'new_space').space_size / 1048576);
    }
    console.log(max);`;
  const youngMax = (cap: number, paced = true) => Number(spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script(cap, paced)], { encoding: 'utf8' }).stdout.trim());

  it('lets the young generation grow up to the cap and no further', () => {
    const capped = youngMax(8);
    const free = youngMax(0);
    assert.ok(capped >= 4 && capped <= 8, `capped young generation at ${capped} MiB`);
    assert.ok(free > 8, `uncapped young generation only reached ${free} MiB: the test does not make it grow`);
  });

  it('lets it grow only after a pace: work between capYoungGeneration and the first pace keeps the size it had', () => {
    const unpaced = youngMax(32, false);
    const paced = youngMax(32);
    assert.ok(unpaced <= 4, `young generation grew to ${unpaced} MiB without a pace`);
    assert.ok(paced > unpaced, `paced ${paced} MiB, unpaced ${unpaced} MiB: the test does not make it grow`);
  });
});

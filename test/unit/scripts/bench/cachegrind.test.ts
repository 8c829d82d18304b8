import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseCachegrind, readCachegrindDir } from '../../../../scripts/bench/cachegrind.ts';

const file = (cmd: string, summary: number, sprp: number[]): string => [
  'desc: I1 cache:', `cmd: ${cmd}`, 'events: Ir',
  'fl=???', 'fn=v8::internal::Heap::Setup()', '1 500', '2 700',
  'fn=void v8::internal::detail::sprp<unsigned long>(unsigned long*)', ...sprp.map((n, i) => `${i + 3} ${n}`),
  'fn=main', '9 100',
  `summary: ${summary}`, '',
].join('\n');

test('parseCachegrind subtracts the hash-seed set-up and names the program', () => {
  const c = parseCachegrind(file('/usr/bin/node /opt/cni/bin/flannel', 10_000_000, [1_000_000, 234]));
  assert.deepEqual(c, { program: 'node', instructions: 10_000_000 - 1_000_234 });
});

test('parseCachegrind counts lines of other functions as they are', () => {
  assert.equal(parseCachegrind(file('/usr/lib/cni/bridge', 3_500_000, [])).instructions, 3_500_000);
});

test('parseCachegrind refuses a file that is not cachegrind output', () => {
  assert.throws(() => parseCachegrind('hello\n'), /not a cachegrind output file/);
});

test('readCachegrindDir sums every process of a run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'weft-cg-'));
  try {
    writeFileSync(join(dir, '101'), file('/x/flannel', 1_900_000, []));
    writeFileSync(join(dir, '102'), file('/x/bridge', 3_500_000, [100]));
    const r = readCachegrindDir(dir);
    assert.equal(r.total, 1_900_000 + 3_500_000 - 100);
    assert.deepEqual(r.processes.map((p) => p.program), ['flannel', 'bridge']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

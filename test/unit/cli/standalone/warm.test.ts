// The snapshot builder's warm-up: it must leave the build machine's temp dir as it found it.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { warmNodeInternals } from '../../../../cli/standalone/warm.ts';

test('warmNodeInternals runs every call in its own scratch dir and leaves nothing behind', () => {
  const dir = mkdtempSync(join(tmpdir(), 'weft-warm-test-'));
  const saved = process.env['TMPDIR'];
  process.env['TMPDIR'] = dir;
  try {
    warmNodeInternals();
    warmNodeInternals(); // a second snapshot build on the same machine finds nothing in its way
    assert.deepEqual(readdirSync(dir), []);
  } finally {
    if (saved === undefined) delete process.env['TMPDIR'];
    else process.env['TMPDIR'] = saved;
    rmSync(dir, { recursive: true, force: true });
  }
});

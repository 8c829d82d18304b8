// Unit tests for the native flock's bounded wait (lib/sys/weft_sys.c): no root, a temp file, a child
// process as the other holder. Needs the addon built (npm run build); skipped without it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, closeSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const built = join(dirname(fileURLToPath(import.meta.url)), '../../../../lib/sys/build/Release/weft_sys.node');
const skip = existsSync(built) ? false : 'the addon is not built';
const dir = mkdtempSync(join(tmpdir(), 'weft-flock-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const lockFile = join(dir, 'lock');
writeFileSync(lockFile, '');

async function sys(): Promise<{ flock(fd: number, op: string, wait?: boolean | number): boolean }> {
  const { sys: load } = await import('../../../../lib/sys/index.ts');
  return load();
}

/**
 * A child holding an exclusive flock on lockFile until it reads a line on stdin (or, with
 * `releaseAfterMs`, until that timer ends: this thread may be blocked in flock by then); resolves once it holds it.
 */
async function holder(releaseAfterMs?: number): Promise<{ release(): Promise<void> }> {
  const exit = releaseAfterMs === undefined ? `process.stdin.once('data',()=>process.exit(0))` : `setTimeout(()=>process.exit(0),${releaseAfterMs})`;
  const script = `const s=require(${JSON.stringify(built)});const fs=require('fs');const fd=fs.openSync(${JSON.stringify(lockFile)},'r');s.flock(fd,'ex');process.stdout.write('held\\n');${exit};`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // A timed holder may have exited while this thread was blocked in flock: its stdin is then closed.
  child.stdin.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`holder exited (${code})`)));
  });
  return {
    release: async () => {
      if (releaseAfterMs === undefined) child.stdin.write('\n');
      await exited;
    },
  };
}

test('a bounded wait on a held lock returns false after the wait, and true on a free one', { skip }, async () => {
  const s = await sys();
  const h = await holder();
  const fd = openSync(lockFile, 'r');
  try {
    assert.equal(s.flock(fd, 'ex', true), false);
    const t0 = performance.now();
    assert.equal(s.flock(fd, 'ex', 150), false);
    assert.ok(performance.now() - t0 >= 140, 'waited about the bound');
    assert.equal(s.flock(fd, 'sh', 0), false);
  } finally {
    await h.release();
  }
  assert.equal(s.flock(fd, 'ex', 150), true);
  s.flock(fd, 'un');
  closeSync(fd);
});

test('a bounded wait is handed the lock when its holder lets go, well before the bound', { skip }, async () => {
  const s = await sys();
  const h = await holder(300);
  const fd = openSync(lockFile, 'r');
  try {
    assert.equal(s.flock(fd, 'ex', true), false, 'held by the child');
    assert.equal(s.flock(fd, 'ex', 120_000), true);
  } finally {
    await h.release();
    closeSync(fd);
  }
});

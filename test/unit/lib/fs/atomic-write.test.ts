import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomicSync, writeTempFileSync } from '../../../../lib/fs/atomic-write.ts';

function withDir(fn: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'weft-aw-'));
  try {
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('writeFileAtomicSync replaces the file and leaves no temp behind', () => {
  withDir((dir) => {
    const p = join(dir, 'f');
    writeFileSync(p, 'old');
    writeFileAtomicSync(p, 'new text');
    assert.equal(readFileSync(p, 'utf8'), 'new text');
    writeFileAtomicSync(p, Buffer.from([1, 2, 3]));
    assert.deepEqual([...readFileSync(p)], [1, 2, 3]);
    assert.deepEqual(readdirSync(dir), ['f']);
  });
});

test('mode: umask applies unless exactMode', () => {
  withDir((dir) => {
    const old = process.umask(0o077);
    try {
      writeFileAtomicSync(join(dir, 'a'), 'x', { mode: 0o644 });
      writeFileAtomicSync(join(dir, 'b'), 'x', { mode: 0o644, exactMode: true, fsyncDir: true });
    } finally {
      process.umask(old);
    }
    assert.equal(statSync(join(dir, 'a')).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'b')).mode & 0o777, 0o644);
  });
});

test('temp names: sibling, unique, hidden and tagged on request', () => {
  withDir((dir) => {
    const p = join(dir, 'conf');
    const a = writeTempFileSync(p, 'a', { hidden: true, tempTag: 'weft-tmp' });
    const b = writeTempFileSync(p, 'b', { fsync: false });
    assert.notEqual(a, b);
    assert.match(a, new RegExp(`^${dir}/\\.conf\\.weft-tmp-${process.pid}-`));
    assert.match(b, new RegExp(`^${dir}/conf\\.tmp-${process.pid}-`));
    assert.equal(readFileSync(a, 'utf8'), 'a');
  });
});

test('a failed rename removes the temp file and rethrows', () => {
  withDir((dir) => {
    const p = join(dir, 'd');
    mkdirSync(join(p, 'busy'), { recursive: true }); // rename(2) of a file over a non-empty dir fails
    assert.throws(() => writeFileAtomicSync(p, 'x'), (e: NodeJS.ErrnoException) => e.code === 'EISDIR' || e.code === 'ENOTEMPTY');
    assert.deepEqual(readdirSync(dir), ['d']);
  });
});

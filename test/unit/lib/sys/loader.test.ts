// Unit tests for the embedded-addon loader: private directory checks and the atomic, content-addressed write.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  addonDirCandidates,
  addonFileName,
  ensureAddonFile,
  ensurePrivateDir,
} from '../../../../lib/sys/loader.ts';
import type { EmbeddedAddon } from '../../../../lib/sys/loader.ts';

const uid = process.getuid?.() ?? 0;
const base = mkdtempSync(join(tmpdir(), 'weft-loader-test-'));
after(() => rmSync(base, { recursive: true, force: true }));

let seq = 0;
function freshPath(): string {
  return join(base, `d${++seq}`);
}

function addonOf(bytes: Buffer): EmbeddedAddon {
  const b64 = bytes.toString('base64');
  return { sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length, base64: () => b64 };
}

describe('addon names', () => {
  test('addonFileName uses the first 16 hex digits and rejects non-hashes', () => {
    const sha = 'ab'.repeat(32);
    assert.equal(addonFileName(sha), `weft_sys-${'ab'.repeat(8)}.node`);
    assert.throws(() => addonFileName('../../etc/passwd'), /bad embedded sha256/);
    assert.throws(() => addonFileName('AB'.repeat(32)), /bad embedded sha256/);
  });

  test('candidates: /run/weft first, then a per-uid dir under TMPDIR', () => {
    assert.deepEqual(addonDirCandidates(1234, '/tmp/x'), ['/run/weft', '/tmp/x/weft-1234']);
  });
});

describe('ensurePrivateDir', () => {
  test('creates a missing dir with mode 0700 and accepts it again (idempotent)', () => {
    const dir = freshPath();
    ensurePrivateDir(dir, uid);
    assert.equal(lstatSync(dir).mode & 0o777, 0o700);
    ensurePrivateDir(dir, uid);
  });

  test('refuses a dir writable by group or others', () => {
    const dir = freshPath();
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    assert.throws(() => ensurePrivateDir(dir, uid), { code: 'EUNSAFEDIR', message: /writable by group or others/ });
    chmodSync(dir, 0o720);
    assert.throws(() => ensurePrivateDir(dir, uid), { code: 'EUNSAFEDIR' });
  });

  test('refuses a dir owned by another uid', () => {
    const dir = freshPath();
    mkdirSync(dir, { mode: 0o700 });
    assert.throws(() => ensurePrivateDir(dir, uid + 1), { code: 'EUNSAFEDIR', message: /owned by uid/ });
  });

  test('refuses a symlink to a good dir and a regular file', () => {
    const target = freshPath();
    mkdirSync(target, { mode: 0o700 });
    const link = freshPath();
    symlinkSync(target, link);
    assert.throws(() => ensurePrivateDir(link, uid), { code: 'EUNSAFEDIR', message: /symlink/ });
    const file = freshPath();
    writeFileSync(file, 'x');
    assert.throws(() => ensurePrivateDir(file, uid), { code: 'EUNSAFEDIR', message: /not a directory/ });
  });

  test('reports a missing parent as the fs error', () => {
    assert.throws(() => ensurePrivateDir(join(freshPath(), 'sub'), uid), { code: 'ENOENT' });
  });
});

describe('ensureAddonFile', () => {
  test('writes the bytes once, content-addressed, leaving no temp files', () => {
    const dir = freshPath();
    ensurePrivateDir(dir, uid);
    const bytes = Buffer.from('not really an ELF file, but bytes all the same');
    const addon = addonOf(bytes);
    const path = ensureAddonFile(dir, addon, uid);
    assert.equal(path, join(dir, addonFileName(addon.sha256)));
    assert.deepEqual(readFileSync(path), bytes);
    const ino = lstatSync(path).ino;
    assert.equal(ensureAddonFile(dir, addon, uid), path);
    assert.equal(lstatSync(path).ino, ino, 'second call must not rewrite the file');
    assert.deepEqual(readdirSync(dir), [addonFileName(addon.sha256)]);
  });

  test('replaces a file of the wrong size', () => {
    const dir = freshPath();
    ensurePrivateDir(dir, uid);
    const bytes = Buffer.from('0123456789abcdef');
    const addon = addonOf(bytes);
    writeFileSync(join(dir, addonFileName(addon.sha256)), 'truncated');
    const path = ensureAddonFile(dir, addon, uid);
    assert.deepEqual(readFileSync(path), bytes);
  });

  test('refuses a corrupt embedding and leaves nothing behind', () => {
    const dir = freshPath();
    ensurePrivateDir(dir, uid);
    const addon = { ...addonOf(Buffer.from('abc')), base64: () => Buffer.from('abd').toString('base64') };
    assert.throws(() => ensureAddonFile(dir, addon, uid), /corrupt/);
    assert.deepEqual(readdirSync(dir), []);
  });

  test('concurrent writers never expose a partial file', async () => {
    const dir = freshPath();
    ensurePrivateDir(dir, uid);
    const bytes = Buffer.alloc(8 << 20, 0x5a);
    const addon = addonOf(bytes);
    const payload = join(base, `payload-${seq}.json`);
    writeFileSync(payload, JSON.stringify({ ...addon, base64: addon.base64() }));
    const final = join(dir, addonFileName(addon.sha256));
    const loader = fileURLToPath(new URL('../../../../lib/sys/loader.ts', import.meta.url));
    const script =
      `const { ensureAddonFile } = await import(${JSON.stringify(loader)});` +
      `const fs = await import('node:fs');` +
      `const a = JSON.parse(fs.readFileSync(${JSON.stringify(payload)}, 'utf8'));` +
      `ensureAddonFile(${JSON.stringify(dir)}, { ...a, base64: () => a.base64 });`;
    const children = Array.from({ length: 4 }, () =>
      new Promise<number | null>((resolve, reject) => {
        const c = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: 'inherit' });
        c.on('error', reject);
        c.on('exit', resolve);
      }),
    );
    let done = false;
    const all = Promise.all(children).finally(() => (done = true));
    while (!done) {
      try {
        const size = lstatSync(final).size;
        assert.equal(size, bytes.length, 'a reader saw a partially written addon');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
      await new Promise((r) => setImmediate(r));
    }
    assert.deepEqual(await all, [0, 0, 0, 0]);
    assert.deepEqual(readdirSync(dir), [addonFileName(addon.sha256)]);
    assert.ok(readFileSync(final).equals(bytes));
  });
});

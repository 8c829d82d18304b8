// Namespace handles without root: the calling process's own netns and files that are not one.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { currentNetnsPath, isOwnNetns, isSameNetns, openNetns } from '../../../../lib/netns/index.ts';

const work = mkdtempSync(join(tmpdir(), 'weft-netns-unit-'));
after(() => rmSync(work, { recursive: true, force: true }));

describe('openNetns', () => {
  test('opens our own netns and identifies it', () => {
    const h = openNetns('/proc/self/ns/net');
    try {
      assert.ok(h.fd >= 0);
      assert.equal(h.path, '/proc/self/ns/net');
      assert.ok(isSameNetns(h, currentNetnsPath()));
      assert.ok(isOwnNetns(h));
    } finally {
      h.close();
    }
  });

  test('a closed handle refuses to hand out its fd; close is idempotent', () => {
    const h = openNetns(currentNetnsPath());
    h.close();
    h.close();
    assert.equal(h.closed, true);
    assert.throws(() => h.fd, /closed/);
  });

  test('rejects a regular file with ENOTNETNS', () => {
    const file = join(work, 'not-a-netns');
    writeFileSync(file, '');
    assert.throws(() => openNetns(file), { code: 'ENOTNETNS', message: /is not a network namespace/ });
  });

  test('rejects a directory and another namespace type with ENOTNETNS', () => {
    assert.throws(() => openNetns(work), { code: 'ENOTNETNS' });
    assert.throws(() => openNetns('/proc/self/ns/mnt'), { code: 'ENOTNETNS', message: /a mnt namespace/ });
    assert.throws(() => openNetns(''), { code: 'ENOTNETNS' });
  });

  test('a missing path keeps the fs error code ENOENT (DEL treats it as "netns gone")', () => {
    assert.throws(() => openNetns(join(work, 'missing')), { code: 'ENOENT' });
  });
});

describe('isOwnNetns / isSameNetns', () => {
  test('/proc/self/ns/net is our own netns', () => {
    assert.equal(isOwnNetns('/proc/self/ns/net'), true);
    assert.equal(isOwnNetns(`/proc/${process.pid}/ns/net`), true);
  });

  test('different namespace types never compare equal', () => {
    assert.equal(isSameNetns('/proc/self/ns/net', '/proc/self/ns/uts'), false);
  });
});

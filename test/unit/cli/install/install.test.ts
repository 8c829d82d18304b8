// install()/uninstall() in-process on temp dirs with a fake build (no dist/, no root): manifest,
// backups, idempotency, retiring files of another backend, publishFileSync's mode and temp files.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { publishFileSync } from '../../../../lib/fs/atomic-write.ts';
import { ensureDirs } from '../../../../lib/fs/ensure-dirs.ts';
import { install } from '../../../../cli/install/install.ts';
import { readManifest } from '../../../../cli/install/manifest.ts';
import { normalizeInstallOptions, type InstallOptions } from '../../../../cli/install/options.ts';
import { pluginNames } from '../../../../cli/install/plan.ts';
import { uninstall } from '../../../../cli/install/uninstall.ts';

const temps: string[] = [];
after(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

function fixture(backend: string): { t: string; opts: InstallOptions } {
  const t = mkdtempSync(join(tmpdir(), 'weft-install-unit-'));
  temps.push(t);
  const src = join(t, 'src');
  mkdirSync(src);
  for (const n of [...pluginNames(), 'weftd']) writeFileSync(join(src, n), `#!/bin/sh\necho ${n}\n`, { mode: 0o755 });
  const opts = normalizeInstallOptions({
    sourceDir: src, backend, binDir: join(t, 'bin'), confDir: join(t, 'conf'), unitDir: join(t, 'unit'),
    agentDir: join(t, 'sbin'), weftConfDir: join(t, 'weft'), stateDir: join(t, 'state'), singleNode: true,
  });
  return { t, opts };
}

describe('install / uninstall (in-process)', () => {
  test('records every file with its hash; the manifest lists the dirs it created', () => {
    const { t, opts } = fixture('flannel-vxlan');
    const r = install(opts);
    const m = readManifest(opts.stateDir);
    assert.ok(m);
    assert.deepEqual(m.files.map((f) => f.path).sort(), r.written.map((w) => w.path).sort());
    assert.ok(m.files.every((f) => /^[0-9a-f]{64}$/.test(f.sha256) && f.backup === undefined));
    assert.deepEqual(new Set(m.createdDirs), new Set(['state', 'state/backups', 'bin', 'conf', 'sbin', 'weft', 'unit'].map((d) => join(t, d))));
    const u = uninstall(opts.stateDir);
    assert.ok(u.found);
    assert.ok(u.files.every((f) => f.action === 'removed'));
    assert.deepEqual(readdirSync(t), ['src']);
  });

  test('a second install is idempotent and keeps the first backup', () => {
    const { opts } = fixture('bridge');
    mkdirSync(opts.binDir);
    writeFileSync(join(opts.binDir, 'bridge'), 'vendor bridge');
    chmodSync(join(opts.binDir, 'bridge'), 0o711);
    install(opts);
    const first = readManifest(opts.stateDir);
    install(opts);
    const second = readManifest(opts.stateDir);
    assert.deepEqual(second?.files, first?.files);
    const entry = second?.files.find((f) => f.path.endsWith('/bridge'));
    assert.equal(entry?.backupMode, 0o711);
    assert.equal(readFileSync(join(opts.stateDir, 'backups', entry?.backup ?? '?'), 'utf8'), 'vendor bridge');
    uninstall(opts.stateDir);
    assert.equal(readFileSync(join(opts.binDir, 'bridge'), 'utf8'), 'vendor bridge');
    assert.equal(statSync(join(opts.binDir, 'bridge')).mode & 0o777, 0o711);
    assert.deepEqual(readdirSync(opts.binDir), ['bridge'], 'the bin dir pre-existed: kept, with only what was there');
    assert.ok(!existsSync(opts.stateDir));
  });

  test('switching backend retires weftd, its net-conf and unit', () => {
    const { opts } = fixture('host-gw');
    install(opts);
    assert.ok(existsSync(join(opts.unitDir, 'weftd.service')));
    const r = install({ ...opts, backend: 'bridge' });
    assert.deepEqual(r.retired.map((x) => x.action), ['removed', 'removed', 'removed']);
    assert.ok(!existsSync(join(opts.unitDir, 'weftd.service')));
    assert.ok(!(readManifest(opts.stateDir)?.files ?? []).some((f) => f.path.endsWith('weftd.service')));
  });

  test('moving the conf dir between installs restores both replaced conflists', () => {
    const { opts } = fixture('bridge');
    const other = `${opts.confDir}-b`;
    for (const [dir, text] of [[opts.confDir, 'conflist in A'], [other, 'conflist in B']] as const) {
      mkdirSync(dir);
      writeFileSync(join(dir, opts.conflistName), text);
    }
    install(opts);
    install({ ...opts, confDir: other });
    assert.equal(readFileSync(join(opts.confDir, opts.conflistName), 'utf8'), 'conflist in A', 'A was retired: its backup restored');
    uninstall(opts.stateDir);
    assert.equal(readFileSync(join(other, opts.conflistName), 'utf8'), 'conflist in B');
    assert.equal(readFileSync(join(opts.confDir, opts.conflistName), 'utf8'), 'conflist in A');
  });

  test('dry run writes nothing; uninstall without a manifest is a no-op', () => {
    const { t, opts } = fixture('bridge');
    const r = install({ ...opts, dryRun: true });
    assert.ok(r.written.length > 0);
    assert.deepEqual(readdirSync(t), ['src']);
    assert.deepEqual(uninstall(opts.stateDir), { found: false, files: [], removedDirs: [], keptDirs: [] });
  });

  test('refuses to replace a directory or symlink at a target path', () => {
    const { opts } = fixture('bridge');
    mkdirSync(join(opts.binDir, 'bridge'), { recursive: true });
    assert.throws(() => install(opts), /bridge exists and is not a regular file/);
    assert.ok(!existsSync(opts.stateDir), 'refused before changing anything');
  });

  test('a missing plugin the conflist needs is named', () => {
    const { opts } = fixture('bridge');
    rmSync(join(opts.sourceDir, 'host-local'));
    assert.throws(() => install(opts), /needs the plugin "host-local"/);
  });
});

describe('publishFileSync', () => {
  test('exact mode despite the umask, no temp file left, replaces in place', () => {
    const t = mkdtempSync(join(tmpdir(), 'weft-aw-'));
    temps.push(t);
    const p = join(t, 'f');
    const old = process.umask(0o077);
    try {
      publishFileSync(p, 'one', 0o755);
      assert.equal(statSync(p).mode & 0o777, 0o755);
      const ino = statSync(p).ino;
      publishFileSync(p, 'two', 0o644);
      assert.equal(readFileSync(p, 'utf8'), 'two');
      assert.notEqual(statSync(p).ino, ino, 'a new inode: readers holding the old one keep reading it whole');
    } finally {
      process.umask(old);
    }
    assert.deepEqual(readdirSync(t), ['f']);
  });

  test('ensureDirs returns only what it created, outermost first', () => {
    const t = mkdtempSync(join(tmpdir(), 'weft-aw-'));
    temps.push(t);
    assert.deepEqual(ensureDirs(join(t, 'a/b/c')), [join(t, 'a'), join(t, 'a/b'), join(t, 'a/b/c')]);
    assert.deepEqual(ensureDirs(join(t, 'a/b/d')), [join(t, 'a/b/d')]);
  });
});

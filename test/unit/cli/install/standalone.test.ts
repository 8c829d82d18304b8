// install --standalone in-process on temp dirs with a fake standalone file (no dist/, no root): one
// file, every plugin a hard link to it, one hash in the manifest, the unit's ExecStart, uninstall.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
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
  const t = mkdtempSync(join(tmpdir(), 'weft-install-sa-unit-'));
  temps.push(t);
  const file = join(t, 'weft-standalone');
  // Answers `weft weftd --version` (the installer checks that weftd starts from the unit's command).
  writeFileSync(file, '#!/bin/sh\n[ "$1" = weftd ] && [ "$2" = --version ] && echo 0.1.0\n', { mode: 0o755 });
  const opts = normalizeInstallOptions({
    sourceDir: join(t, 'nowhere'), standaloneFile: file, backend, binDir: join(t, 'bin'), confDir: join(t, 'conf'),
    unitDir: join(t, 'unit'), agentDir: join(t, 'sbin'), weftConfDir: join(t, 'weft'), stateDir: join(t, 'state'), singleNode: true,
  });
  return { t, opts };
}

describe('install --standalone (in-process)', () => {
  test('one file in the bin dir, each plugin a hard link to it, one hash; the unit runs `weft weftd`', () => {
    const { t, opts } = fixture('host-gw');
    const r = install(opts);
    assert.deepEqual(r.warnings, []);
    const exe = statSync(join(opts.binDir, 'weft'));
    for (const p of pluginNames()) assert.equal(statSync(join(opts.binDir, p)).ino, exe.ino, p);
    assert.deepEqual(readdirSync(opts.binDir).sort(), ['weft', ...pluginNames()].sort());
    const m = readManifest(opts.stateDir);
    const bin = m?.files.filter((f) => f.path.startsWith(opts.binDir)) ?? [];
    assert.equal(bin.length, pluginNames().length + 1);
    assert.equal(new Set(bin.map((f) => f.sha256)).size, 1);
    assert.match(readFileSync(join(opts.unitDir, 'weftd.service'), 'utf8'), new RegExp(`^ExecStart=${join(opts.binDir, 'weft')} weftd `, 'm'));
    assert.ok(!readdirSync(t).includes('sbin'), 'nothing goes to the agent dir');
    const u = uninstall(opts.stateDir);
    assert.ok(u.files.every((f) => f.action === 'removed'), JSON.stringify(u.files));
    assert.deepEqual(readdirSync(t).sort(), ['weft-standalone']);
  });

  test('a plugin replaced by someone else after the install is kept by uninstall, the rest removed', () => {
    const { opts } = fixture('bridge');
    install(opts);
    const bridge = join(opts.binDir, 'bridge');
    rmSync(bridge);
    writeFileSync(bridge, 'someone else\n', { mode: 0o755 });
    const u = uninstall(opts.stateDir);
    assert.deepEqual(u.files.filter((f) => f.action === 'kept-modified').map((f) => f.path), [bridge]);
    assert.deepEqual(readdirSync(opts.binDir), ['bridge']);
  });

  test('a missing standalone file is refused before anything is written', () => {
    const { t, opts } = fixture('bridge');
    rmSync(join(t, 'weft-standalone'));
    assert.throws(() => install(opts), /weft-standalone is missing/);
    assert.deepEqual(readdirSync(t), []);
  });
});

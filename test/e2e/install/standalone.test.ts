// `weft install --standalone`: the standalone executable once as <bin-dir>/weft, every plugin name a
// hard link to it, weftd started from it by the unit; uninstall leaves every dir byte for byte as it
// was, also over existing files and after switching between bundles and standalone. Temp dirs only.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pluginNames } from '../../../cli/install/plan.ts';
import { diffTrees, dirFlags, hashTree, runCmd, SEA_WEFT, weft, WEFT } from './helpers.ts';

const temps: string[] = [];
function tempRoot(): string {
  const t = mkdtempSync(join(tmpdir(), 'weft-install-sa-'));
  temps.push(t);
  return t;
}

/** Every plugin of the bin dir is the same inode as <bin>/weft, and weft is a byte copy of dist/sea/weft. */
function assertLinked(bin: string): void {
  const exe = statSync(join(bin, 'weft'));
  assert.equal(exe.mode & 0o777, 0o755);
  assert.equal(exe.size, statSync(SEA_WEFT).size);
  assert.ok(readFileSync(join(bin, 'weft')).equals(readFileSync(SEA_WEFT)), 'weft is a byte copy of dist/sea/weft');
  for (const p of pluginNames()) {
    const st = statSync(join(bin, p));
    assert.equal(st.ino, exe.ino, `${p} is a hard link to weft`);
  }
  assert.equal(exe.nlink, pluginNames().length + 1);
  assert.deepEqual(readdirSync(bin).filter((f) => f.includes('weft-tmp')), [], 'no temp file left');
}

describe('weft install --standalone', () => {
  before(() => {
    assert.ok(existsSync(WEFT) && existsSync(SEA_WEFT), 'dist/bin/weft and dist/sea/weft must be built (npm run build)');
  });
  after(() => {
    for (const t of temps) rmSync(t, { recursive: true, force: true });
  });

  test('flannel-vxlan: one file, hard links, unit runs `weft weftd`; plugins and weftd run from there; uninstall leaves nothing', async () => {
    const t = tempRoot();
    const before = hashTree(t);
    const r = await weft(['install', '--standalone', '--backend', 'flannel-vxlan', '--single-node', ...dirFlags(t)]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '', 'no warning: weftd starts from the bin dir');
    const bin = join(t, 'opt/cni/bin');
    assertLinked(bin);
    assert.ok(!existsSync(join(t, 'usr/local/bin/weftd')), 'no separate weftd');
    const unit = readFileSync(join(t, 'etc/systemd/system/weftd.service'), 'utf8');
    assert.match(unit, new RegExp(`^ExecStart=${join(bin, 'weft')} weftd --net-conf=${join(t, 'etc/weft/net-conf.json')} `, 'm'));
    const v = await runCmd([join(bin, 'host-local')], { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', CNI_COMMAND: 'VERSION' });
    assert.equal(v.code, 0, v.stderr);
    assert.ok((JSON.parse(v.stdout) as { supportedVersions: string[] }).supportedVersions.includes('1.1.0'));
    const d = await runCmd([join(bin, 'weft'), 'weftd', '--version']);
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, /\d+\.\d+\.\d+/);

    const u = await weft(['install', '--uninstall', '--state-dir', join(t, 'var/lib/weft/install')]);
    assert.equal(u.code, 0, u.stderr);
    assert.deepEqual(diffTrees(before, hashTree(t)), []);
  });

  test('over existing files, run by the standalone weft itself, then bundles, then standalone again: uninstall restores byte for byte', async () => {
    const t = tempRoot();
    for (const d of ['opt/cni/bin', 'etc/cni/net.d']) mkdirSync(join(t, d), { recursive: true });
    writeFileSync(join(t, 'opt/cni/bin/bridge'), '#!/bin/sh\necho old bridge\n');
    chmodSync(join(t, 'opt/cni/bin/bridge'), 0o700);
    writeFileSync(join(t, 'opt/cni/bin/macvlan'), '#!/bin/sh\necho someone else\n', { mode: 0o755 });
    writeFileSync(join(t, 'etc/cni/net.d/10-weft.conflist'), '{"name":"old"}\n');
    const before = hashTree(t);
    const bin = join(t, 'opt/cni/bin');
    // The standalone file as the CLI installs itself by default (no --standalone needed).
    const r1 = await runCmd([SEA_WEFT, 'install', '--backend', 'bridge', ...dirFlags(t)]);
    assert.equal(r1.code, 0, r1.stderr);
    assert.match(r1.stdout, /backed up .*opt\/cni\/bin\/bridge/);
    assertLinked(bin);
    assert.equal(readFileSync(join(bin, 'macvlan'), 'utf8'), '#!/bin/sh\necho someone else\n');
    const r2 = await weft(['install', '--backend', 'host-gw', '--single-node', ...dirFlags(t)]);
    assert.equal(r2.code, 0, r2.stderr);
    assert.ok(!existsSync(join(bin, 'weft')), 'the bundles install retires the standalone file');
    assert.notEqual(statSync(join(bin, 'bridge')).ino, statSync(join(bin, 'host-local')).ino);
    const r3 = await weft(['install', '--standalone', '--backend', 'flannel-udp', '--single-node', ...dirFlags(t)]);
    assert.equal(r3.code, 0, r3.stderr);
    assertLinked(bin);
    assert.ok(!existsSync(join(t, 'usr/local/bin/weftd')), 'the bundles weftd is retired');
    const u = await weft(['install', '--uninstall', '--state-dir', join(t, 'var/lib/weft/install')]);
    assert.equal(u.code, 0, u.stderr);
    assert.deepEqual(diffTrees(before, hashTree(t)), []);
  });
});

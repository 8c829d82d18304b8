// `weft install` / `--uninstall` / scripts/install.sh against temp dirs standing in for
// /opt/cni/bin, /etc/cni/net.d, /etc/systemd/system, ...: what is written, and that uninstall
// leaves every dir byte-for-byte (content and mode) as it was, also after upgrades, a backend
// switch and a file changed by someone else. Never touches the real /opt or /etc.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { diffTrees, dirFlags, DIST_BIN, hashTree, ROOT, runCmd, weft, WEFT } from './helpers.ts';

const temps: string[] = [];
function tempRoot(): string {
  const t = mkdtempSync(join(tmpdir(), 'weft-install-t-'));
  temps.push(t);
  return t;
}

/** A machine root that already has things in it: another vendor's plugin, an older `bridge`, conflists, units. */
function populatedRoot(): string {
  const t = tempRoot();
  for (const d of ['opt/cni/bin', 'etc/cni/net.d', 'etc/systemd/system']) mkdirSync(join(t, d), { recursive: true });
  writeFileSync(join(t, 'opt/cni/bin/bridge'), '#!/bin/sh\necho old bridge\n', { mode: 0o700 });
  chmodSync(join(t, 'opt/cni/bin/bridge'), 0o700);
  writeFileSync(join(t, 'opt/cni/bin/macvlan'), '#!/bin/sh\necho someone else\n', { mode: 0o755 });
  writeFileSync(join(t, 'etc/cni/net.d/10-weft.conflist'), '{"cniVersion":"0.4.0","name":"old","plugins":[]}\n', { mode: 0o600 });
  chmodSync(join(t, 'etc/cni/net.d/10-weft.conflist'), 0o600);
  writeFileSync(join(t, 'etc/cni/net.d/87-podman.conflist'), '{"name":"podman"}\n');
  writeFileSync(join(t, 'etc/systemd/system/other.service'), '[Service]\nExecStart=/bin/true\n');
  return t;
}

describe('weft install / uninstall', () => {
  before(() => {
    assert.ok(existsSync(WEFT), `${WEFT} is missing: run npm run build`);
  });
  after(() => {
    for (const t of temps) rmSync(t, { recursive: true, force: true });
  });

  test('flannel-vxlan into empty dirs: plugins, conflist, weftd, net-conf and unit; uninstall leaves nothing', async () => {
    const t = tempRoot();
    const before = hashTree(t);
    const r = await weft(['install', '--backend', 'flannel-vxlan', '--single-node', ...dirFlags(t)]);
    assert.equal(r.code, 0, r.stderr);
    for (const p of ['bridge', 'host-local', 'loopback', 'portmap', 'flannel', 'flannel-vxlan', 'host-gw']) {
      const dst = join(t, 'opt/cni/bin', p);
      assert.deepEqual(readFileSync(dst), readFileSync(join(DIST_BIN, p)), `${p} is a byte copy`);
      assert.equal(statSync(dst).mode & 0o777, 0o755);
    }
    assert.ok(!existsSync(join(t, 'opt/cni/bin/weft')) && !existsSync(join(t, 'opt/cni/bin/weftd')), 'only CNI plugins go to the CNI bin dir');
    assert.deepEqual(readFileSync(join(t, 'usr/local/bin/weftd')), readFileSync(join(DIST_BIN, 'weftd')));
    const conf = JSON.parse(readFileSync(join(t, 'etc/cni/net.d/10-weft.conflist'), 'utf8')) as { name: string; plugins: Array<{ type: string }> };
    assert.deepEqual(conf.plugins.map((p) => p.type), ['flannel', 'portmap'], "kube-flannel's conflist shape");
    assert.equal(conf.name, 'cbr0', "kube-flannel's network name: host-local's records of flannel's pods stay where weft allocates");
    const unit = readFileSync(join(t, 'etc/systemd/system/weftd.service'), 'utf8');
    assert.match(unit, new RegExp(`ExecStart=${join(t, 'usr/local/bin/weftd')} --net-conf=${join(t, 'etc/weft/net-conf.json')} `));
    assert.deepEqual(JSON.parse(readFileSync(join(t, 'etc/weft/net-conf.json'), 'utf8')), { Network: '10.244.0.0/16', SubnetLen: 24, Backend: { Type: 'vxlan' } });
    // The installed plugin runs from its new home (a lone CommonJS bundle, no package.json near it).
    const v = await runCmd([join(t, 'opt/cni/bin/bridge')], { ...process.env, CNI_COMMAND: 'VERSION' });
    assert.equal(v.code, 0, v.stderr);
    assert.ok((JSON.parse(v.stdout) as { supportedVersions: string[] }).supportedVersions.includes('1.0.0'));
    assert.deepEqual(readdirSync(join(t, 'opt/cni/bin')).filter((f) => f.includes('weft-tmp')), [], 'no temp file left');

    const u = await weft(['install', '--uninstall', '--state-dir', join(t, 'var/lib/weft/install')]);
    assert.equal(u.code, 0, u.stderr);
    assert.deepEqual(diffTrees(before, hashTree(t)), []);
  });

  test('over existing files: replaced ones are restored, others untouched, byte-for-byte and mode', async () => {
    const t = populatedRoot();
    const before = hashTree(t);
    const r = await weft(['install', '--backend', 'bridge', '--network', '10.99.0.0/16', ...dirFlags(t)]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /backed up .*opt\/cni\/bin\/bridge/);
    assert.match(r.stdout, /backed up .*10-weft\.conflist/);
    assert.deepEqual(readFileSync(join(t, 'opt/cni/bin/bridge')), readFileSync(join(DIST_BIN, 'bridge')));
    const conf = JSON.parse(readFileSync(join(t, 'etc/cni/net.d/10-weft.conflist'), 'utf8')) as { plugins: Array<{ type: string; ipam?: { ranges: unknown } }> };
    assert.deepEqual(conf.plugins.map((p) => p.type), ['bridge', 'portmap']);
    assert.deepEqual(conf.plugins[0]?.ipam?.ranges, [[{ subnet: '10.99.0.0/16' }]]);
    assert.ok(!existsSync(join(t, 'etc/systemd/system/weftd.service')), 'the bridge backend needs no weftd');
    assert.equal(readFileSync(join(t, 'opt/cni/bin/macvlan'), 'utf8'), '#!/bin/sh\necho someone else\n');

    const u = await weft(['uninstall', '--state-dir', join(t, 'var/lib/weft/install')]);
    assert.equal(u.code, 0, u.stderr);
    assert.match(u.stdout, /restored +.*opt\/cni\/bin\/bridge/);
    assert.deepEqual(diffTrees(before, hashTree(t)), []);
  });

  test('upgrade (install twice) and a backend switch still uninstall to the original state', async () => {
    const t = populatedRoot();
    const before = hashTree(t);
    for (const backend of ['flannel-vxlan', 'flannel-vxlan', 'host-gw', 'bridge']) {
      const r = await weft(['install', '--backend', backend, '--single-node', ...dirFlags(t)]);
      assert.equal(r.code, 0, `${backend}: ${r.stderr}`);
    }
    // The switch to bridge retired weftd, its net-conf and unit (restored or removed).
    assert.ok(!existsSync(join(t, 'etc/systemd/system/weftd.service')));
    assert.ok(!existsSync(join(t, 'usr/local/bin/weftd')));
    const u = await weft(['uninstall', '--state-dir', join(t, 'var/lib/weft/install')]);
    assert.equal(u.code, 0, u.stderr);
    assert.deepEqual(diffTrees(before, hashTree(t)), []);
  });

  test('a file changed after the install is kept (exit 1) until --force', async () => {
    const t = populatedRoot();
    const before = hashTree(t);
    assert.equal((await weft(['install', ...dirFlags(t)])).code, 0);
    const conflist = join(t, 'etc/cni/net.d/10-weft.conflist');
    writeFileSync(conflist, '{"edited":"by an admin"}\n');
    const u = await weft(['uninstall', '--state-dir', join(t, 'var/lib/weft/install')]);
    assert.equal(u.code, 1);
    assert.match(u.stdout, /kept-modified +.*10-weft\.conflist/);
    assert.equal(readFileSync(conflist, 'utf8'), '{"edited":"by an admin"}\n');
    assert.deepEqual(readFileSync(join(t, 'opt/cni/bin/bridge'), 'utf8'), '#!/bin/sh\necho old bridge\n', 'the rest was undone');
    const f = await weft(['uninstall', '--force', '--state-dir', join(t, 'var/lib/weft/install')]);
    assert.equal(f.code, 0, f.stderr);
    assert.deepEqual(diffTrees(before, hashTree(t)), []);
  });

  test('bad options exit 2 naming the option and write nothing', async () => {
    const t = tempRoot();
    const before = hashTree(t);
    for (const [args, re] of [
      [['--backend', 'calico'], /--backend: "calico"/],
      [['--network', '10.0.0.0/33'], /--network: "10\.0\.0\.0\/33"/],
      [['--network-name', '../x'], /--network-name/],
    ] as const) {
      const r = await weft(['install', ...args, ...dirFlags(t)]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, re);
    }
    // flannel-udp writes the same `flannel` conflist; uninstall restores the tree.
    const udp = await weft(['install', '--backend', 'flannel-udp', '--single-node', ...dirFlags(t)]);
    assert.equal(udp.code, 0, udp.stderr);
    assert.equal((await weft(['uninstall', '--state-dir', join(t, 'var/lib/weft/install')])).code, 0);
    assert.deepEqual(diffTrees(before, hashTree(t)), []);
  });

  test('scripts/install.sh passes its options through to weft install', async () => {
    const t = tempRoot();
    const before = hashTree(t);
    const r = await runCmd(['bash', join(ROOT, 'scripts/install.sh'), '--backend', 'host-gw', '--single-node', ...dirFlags(t)]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(existsSync(join(t, 'opt/cni/bin/host-gw')));
    assert.ok(existsSync(join(t, 'etc/systemd/system/weftd.service')));
    const u = await runCmd(['bash', join(ROOT, 'scripts/install.sh'), '--uninstall', ...dirFlags(t)]);
    assert.equal(u.code, 0, u.stderr);
    assert.deepEqual(diffTrees(before, hashTree(t)), []);
  });
});

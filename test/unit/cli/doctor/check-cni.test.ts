// check "cni": the first config in the conf dir and every plugin it names present in the bin dir.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { checkCni, pluginTypes } from '../../../../cli/doctor/check-cni.ts';

const dir = mkdtempSync(join(tmpdir(), 'weft-doctor-cni-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function executable(path: string): void {
  writeFileSync(path, '#!/bin/sh\n');
  chmodSync(path, 0o755);
}

test('pluginTypes covers plugins, ipam and flannel\'s rendered delegate', () => {
  assert.deepEqual(pluginTypes({ plugins: [{ type: 'bridge', ipam: { type: 'host-local' } }, { type: 'portmap' }] }), ['bridge', 'host-local', 'portmap']);
  assert.deepEqual(pluginTypes({ plugins: [{ type: 'flannel', delegate: { hairpinMode: true } }] }), ['bridge', 'flannel', 'host-local']);
});

test('no config, a missing plugin, and a complete install', () => {
  const conf = join(dir, 'net.d');
  const bin = join(dir, 'bin');
  assert.match(checkCni(conf, bin).problems[0]?.detail ?? '', /no network configuration in .*net\.d/);
  mkdirSync(conf);
  mkdirSync(bin);
  writeFileSync(join(conf, '10-weft.conflist'), JSON.stringify({ cniVersion: '1.0.0', name: 'weft', plugins: [{ type: 'bridge', ipam: { type: 'host-local' } }] }));
  writeFileSync(join(conf, '99-other.conflist'), '{not json');
  executable(join(bin, 'bridge'));
  const r = checkCni(conf, bin);
  assert.deepEqual(r.problems.map((p) => p.detail), [`${join(conf, '10-weft.conflist')} uses "host-local", missing or not executable in ${bin}: every pod ADD fails with "failed to find plugin"`]);
  executable(join(bin, 'host-local'));
  assert.deepEqual(checkCni(conf, bin).problems, []);
});

test("a configuration that sorts before weft's is named as the one the runtime uses, with the fix for whose it is", () => {
  const conf = join(dir, 'shadow.d');
  const bin = join(dir, 'shadow-bin');
  const state = join(dir, 'no-state');
  mkdirSync(conf);
  mkdirSync(bin);
  for (const t of ['flannel', 'bridge', 'host-local', 'portmap']) executable(join(bin, t));
  const weft = { cniVersion: '1.0.0', name: 'weft', plugins: [{ type: 'flannel', delegate: {} }, { type: 'portmap' }] };
  writeFileSync(join(conf, '10-weft.conflist'), JSON.stringify(weft));
  assert.deepEqual(checkCni(conf, bin, state).problems, []);
  // kube-flannel's conflist, left behind by a migration.
  writeFileSync(join(conf, '10-flannel.conflist'), JSON.stringify({ name: 'cbr0', cniVersion: '0.3.1', plugins: [{ type: 'flannel', delegate: { hairpinMode: true } }, { type: 'portmap' }] }));
  const kf = checkCni(conf, bin, state).problems;
  assert.equal(kf.length, 1, JSON.stringify(kf));
  assert.match(kf[0]?.detail ?? '', /10-flannel\.conflist \(network "cbr0", plugins bridge,flannel,host-local,portmap\) sorts before weft's 10-weft\.conflist: containerd, CRI-O and kubelet load the first/);
  assert.match(kf[0]?.fix ?? '', /kube-flannel's, left behind: .*rm .*10-flannel\.conflist; or make weft's sort first: weft install --conflist-name 00-weft\.conflist/);
  rmSync(join(conf, '10-flannel.conflist'));
  // podman's default network before a weft conflist that sorts late.
  rmSync(join(conf, '10-weft.conflist'));
  writeFileSync(join(conf, '90-weft.conflist'), JSON.stringify(weft));
  writeFileSync(join(conf, '87-podman-bridge.conflist'), JSON.stringify({ cniVersion: '0.4.0', name: 'podman', plugins: [{ type: 'bridge', ipam: { type: 'host-local' } }, { type: 'portmap' }] }));
  const pm = checkCni(conf, bin, state).problems;
  assert.equal(pm.length, 1, JSON.stringify(pm));
  assert.match(pm[0]?.detail ?? '', /87-podman-bridge\.conflist \(network "podman", .*\) sorts before weft's 90-weft\.conflist/);
  assert.match(pm[0]?.fix ?? '', /podman's default network/);
});

test("weft's configuration is also the one the install manifest lists, whatever its name", () => {
  const conf = join(dir, 'manifest.d');
  const state = join(dir, 'state');
  mkdirSync(conf);
  mkdirSync(state);
  writeFileSync(join(conf, '50-cluster.conflist'), JSON.stringify({ cniVersion: '1.0.0', name: 'cluster', plugins: [{ type: 'flannel' }] }));
  writeFileSync(join(conf, '20-other.conflist'), JSON.stringify({ cniVersion: '1.0.0', name: 'other', plugins: [{ type: 'macvlan' }] }));
  writeFileSync(join(state, 'manifest.json'), JSON.stringify({ format: 1, backend: 'flannel-vxlan', installedAt: '', files: [{ path: join(conf, '50-cluster.conflist'), sha256: '', mode: 420 }], createdDirs: [] }));
  const p = checkCni(conf, join(dir, 'bin'), state).problems.find((x) => x.detail.includes('sorts before'));
  assert.match(p?.detail ?? '', /20-other\.conflist \(network "other", plugins macvlan\) sorts before weft's 50-cluster\.conflist/);
  assert.match(p?.fix ?? '', /^move .*20-other\.conflist out of/);
});

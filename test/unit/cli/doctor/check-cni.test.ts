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

// conf/weftd.service, the example unit: weftd takes its ExecStart flags, and under its
// ProtectSystem=strict every directory weftd writes (subnet.env's, the file store's, /run/weft where
// it unpacks its native addon) is one systemd creates writable (RuntimeDirectory=, StateDirectory=)
// or lists in ReadWritePaths=. No root, no systemd.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { normalizeWeftdFlags, weftdCommand, type RawFlags } from '../../../agent/flags.ts';
import { addonDirCandidates } from '../../../lib/sys/loader.ts';

const UNIT = readFileSync(join(import.meta.dirname, '..', '..', '..', 'conf', 'weftd.service'), 'utf8');

function directive(name: string): string[] {
  return [...UNIT.matchAll(new RegExp(`^${name}=(.*)$`, 'gm'))].flatMap((m) => (m[1] as string).trim().split(/\s+/));
}

function execStart(): string[] {
  const m = /^ExecStart=((?:.*\\\n)*.*)$/m.exec(UNIT);
  assert.ok(m, 'an ExecStart= line');
  return (m[1] as string).replace(/\\\n/g, ' ').trim().split(/\s+/);
}

test('weftd takes the unit\'s ExecStart flags', () => {
  const [exe, ...args] = execStart();
  assert.equal(exe, '/usr/local/bin/weftd');
  const cmd = weftdCommand('test').exitOverride();
  cmd.parse(args, { from: 'user' });
  const o = normalizeWeftdFlags(cmd.opts<RawFlags>(), {});
  assert.ok(o, 'normalized');
});

test('every directory weftd writes is writable under ProtectSystem=strict', () => {
  assert.deepEqual(directive('ProtectSystem'), ['strict']);
  const writable = [...directive('RuntimeDirectory').map((d) => `/run/${d}`), ...directive('StateDirectory').map((d) => `/var/lib/${d}`), ...directive('ReadWritePaths').map((d) => d.replace(/^-/, ''))];
  const args = execStart();
  const flag = (name: string): string => {
    const v = args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
    assert.ok(v !== undefined, `--${name}`);
    return v;
  };
  const wants = [dirname(flag('subnet-file')), flag('store').replace(/^file:/, ''), addonDirCandidates()[0] as string];
  for (const w of wants) assert.ok(writable.some((d) => w === d || w.startsWith(`${d}/`)), `${w} is not writable under the unit's sandbox (writable: ${writable.join(' ')})`);
});

test('the unit\'s comment promises no node_modules', () => {
  assert.doesNotMatch(UNIT, /with node_modules/);
});

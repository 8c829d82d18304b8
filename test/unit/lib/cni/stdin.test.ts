// The bounded stdin reader and pluginMain on a real process: oversized stdin is refused (code 7)
// without reading it all, and stdout carries exactly one document.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { MAX_STDIN_BYTES } from '../../../../lib/cni/stdin.ts';

const root = resolve(import.meta.dirname, '../../../..');
const SCRIPT = `
import { pluginMain } from './lib/cni/skel.ts';
import { log } from './lib/cni/log.ts';
await pluginMain({ name: 'p', version: '1', supportedVersions: ['1.0.0'],
  add: (a) => { log.error('to stderr'); return { ips: [{ address: '10.0.0.' + a.stdinData.length % 200 + '/24' }] }; } });
`;

function run(stdin: Buffer, extraEnv: Record<string, string> = {}) {
  return spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], {
    cwd: root,
    input: stdin,
    env: { PATH: process.env['PATH'] ?? '', CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c', CNI_NETNS: '/nonexistent', CNI_IFNAME: 'eth0', CNI_PATH: '/x', ...extraEnv },
    maxBuffer: 1 << 20,
  });
}

describe('pluginMain in a process', () => {
  it('reads a normal config, prints one result and logs only to stderr', () => {
    const cfg = Buffer.from(JSON.stringify({ cniVersion: '1.0.0', name: 'n', type: 'p' }));
    const r = run(cfg);
    assert.equal(r.status, 0, r.stderr.toString());
    assert.deepEqual(JSON.parse(r.stdout.toString()), { cniVersion: '1.0.0', ips: [{ address: `10.0.0.${cfg.length % 200}/24` }] });
    assert.match(r.stderr.toString(), /weft-p\[\d+\] error to stderr/);
  });

  it('refuses stdin over the cap with code 7 and exit 1', () => {
    const big = Buffer.alloc(MAX_STDIN_BYTES * 3, 0x20);
    const r = run(big, { WEFT_LOG: 'off' });
    assert.equal(r.status, 1);
    const doc = JSON.parse(r.stdout.toString()) as { code: number; msg: string };
    assert.equal(doc.code, 7);
    assert.match(doc.msg, /too large/);
  });
});

// The legacy kube-proxy peer's restore record (scripts/bench/services-peer-legacy.ts): how the bench
// reads which restore put a chain in the kernel and when. No root: the record is written by hand, and
// the wrapper runs only `iptables-restore --version`.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { declaresChain, parseRestoreLine, watchRestores, writeLegacyBin } from '../../../../scripts/bench/services-peer-legacy.ts';
import type { ClusterNode } from '../../../../testkit/cluster.ts';

void test('parseRestoreLine: bash $EPOCHREALTIME, exit code, input file', () => {
  assert.deepEqual(parseRestoreLine('1796620266.491350 0 /tmp/x/restore.12.in'), { atMs: 1796620266491.35, rc: 0, input: '/tmp/x/restore.12.in' });
  assert.equal(parseRestoreLine('1796620266.491350 2 /tmp/in')?.rc, 2);
  assert.equal(parseRestoreLine('garbage'), undefined);
  assert.equal(parseRestoreLine('1796620266 0 /tmp/in'), undefined);
});

void test('declaresChain: the ":CHAIN - [0:0]" line only, not a jump to it or a longer name', () => {
  const input = '*nat\n:KUBE-SVC-AAAA - [0:0]\n-A KUBE-SERVICES -j KUBE-SEP-BBBB\n:KUBE-SEP-CCCCX - [0:0]\nCOMMIT\n';
  assert.ok(declaresChain(input, 'KUBE-SVC-AAAA'));
  assert.ok(!declaresChain(input, 'KUBE-SEP-BBBB'));
  assert.ok(!declaresChain(input, 'KUBE-SEP-CCCC'));
  assert.ok(declaresChain(':KUBE-SEP-BBBB - [0:0]\n', 'KUBE-SEP-BBBB'));
});

void test('watchRestores: the exit stamp of the first successful restore declaring the chain', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'weft-legacy-'));
  try {
    const { bin, record } = writeLegacyBin(dir);
    const w = watchRestores({ netns: 'unused' } as ClusterNode, record, 5);
    const seen = w.next('nat', 'KUBE-SEP-NEW', 2000);
    const input = (k: number, text: string) => { const f = join(bin, `restore.${k}.in`); writeFileSync(f, text); return f; };
    // A failed restore declaring it does not count; another chain does not count; the third does.
    const lines = [`1000.000100 1 ${input(1, ':KUBE-SEP-NEW - [0:0]\n')}`, `1000.500000 0 ${input(2, ':KUBE-SEP-OLD - [0:0]\n')}`, `1001.250000 0 ${input(3, '*nat\n:KUBE-SEP-NEW - [0:0]\nCOMMIT\n')}`];
    writeFileSync(record, `${lines.join('\n')}\n`);
    assert.equal(await seen, 1001250);
    // Each input is read once and removed.
    assert.ok(!existsSync(join(bin, 'restore.3.in')));
    await assert.rejects(w.next('nat', 'KUBE-SEP-NEVER', 50), /KUBE-SEP-NEVER/);
    w.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

void test('the wrapper runs the legacy restore and records its exit', { skip: existsSync('/usr/sbin/iptables-legacy-restore') ? false : 'no iptables-legacy here' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'weft-legacy-'));
  try {
    const { bin, record } = writeLegacyBin(dir);
    const out = execFileSync(join(bin, 'iptables-restore'), ['--version'], { encoding: 'utf8', input: '' });
    assert.match(out, /legacy/);
    const line = parseRestoreLine(readFileSync(record, 'utf8').trim());
    assert.equal(line?.rc, 0);
    assert.ok(Math.abs((line?.atMs ?? 0) - Date.now()) < 10_000);
    assert.match(execFileSync(join(bin, 'iptables'), ['--version'], { encoding: 'utf8' }), /legacy/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

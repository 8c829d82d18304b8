import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ownerAlive } from '../../../testkit/netns-owners.ts';

function startTime(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}

test('ownerAlive: this process with its start time is alive', () => {
  assert.equal(ownerAlive(`${process.pid} ${startTime(process.pid)}\n`), true);
});

test('ownerAlive: a reused pid (another start time) is not the owner', () => {
  assert.equal(ownerAlive(`${process.pid} 1`), false);
});

test('ownerAlive: a process that exited is not alive', () => {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  assert.equal(ownerAlive(`${child.stdout} 12345`), false);
});

test('ownerAlive: garbage is not alive', () => {
  assert.equal(ownerAlive(''), false);
  assert.equal(ownerAlive('abc 1'), false);
  assert.equal(ownerAlive('-4 1'), false);
});

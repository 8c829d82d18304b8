// A namespace whose name carries no pid (a topology's) is swept once its owner was SIGKILLed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { rootOnly, sweepStaleTestNetns } from '../../../testkit/netns.ts';

const NETNS_TS = new URL('../../../testkit/netns.ts', import.meta.url).pathname;

test('the sweep deletes a namespace of a SIGKILLed owner, and the daemon inside it', rootOnly(), async () => {
  const name = `wfsw${randomBytes(3).toString('hex')}-n1`;
  // The owner makes the namespace, starts a daemon in it, then waits to be killed.
  const script = `
    import { addNetnsSync, spawnInNetns } from ${JSON.stringify(NETNS_TS)};
    addNetnsSync(${JSON.stringify(name)});
    const d = spawnInNetns(${JSON.stringify(name)}, ['sleep', '600'], { stdio: 'ignore', detached: true });
    d.unref();
    process.stdout.write(String(d.pid) + '\\n');
    setInterval(() => {}, 1000);`;
  const owner = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const daemonPid = await new Promise<number>((resolve, reject) => {
    owner.stdout.once('data', (b: Buffer) => resolve(Number(b.toString().trim())));
    owner.once('exit', (code) => reject(new Error(`owner exited early (${code})`)));
  });
  try {
    assert.ok(existsSync(`/run/netns/${name}`), 'the owner made the namespace');
    assert.deepEqual((await sweepStaleTestNetns()).filter((n) => n === name), [], 'a live owner keeps its namespace');
    owner.kill('SIGKILL');
    await new Promise((r) => owner.once('exit', r));
    assert.ok(existsSync(`/run/netns/${name}`), 'SIGKILL ran no exit hook');
    const removed = await sweepStaleTestNetns();
    assert.ok(removed.includes(name), `swept: ${removed.join(', ')}`);
    assert.equal(existsSync(`/run/netns/${name}`), false);
    assert.equal(existsSync(`/run/weft-test-netns/${name}`), false, 'the owner record is gone');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(existsSync(`/proc/${daemonPid}`) && !readState(daemonPid).startsWith('Z'), false, 'the daemon inside was killed');
  } finally {
    owner.kill('SIGKILL');
    try { process.kill(daemonPid, 'SIGKILL'); } catch { /* gone */ }
    spawn('ip', ['netns', 'delete', name], { stdio: 'ignore' });
  }
});

function readState(pid: number): string {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2);
  } catch {
    return 'gone';
  }
}

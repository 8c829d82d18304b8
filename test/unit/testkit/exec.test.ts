// The test kit's spawn helper: exits reported not thrown, stdin fed or left open, the environment
// replaced, timeouts (124) apart from kills (signal), and a start failure rejected.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { run, runOk } from '../../../testkit/exec.ts';

describe('testkit run()', () => {
  it('reports a non-zero exit with both streams, unstripped', async () => {
    const r = await run(['sh', '-c', 'echo out; echo err >&2; exit 3']);
    assert.deepEqual([r.code, r.stdout, r.stderr, r.signal], [3, 'out\n', 'err\n', null]);
    assert.ok(r.ms > 0);
  });

  it('feeds input (text or bytes) and closes stdin by default', async () => {
    assert.equal((await run(['cat'], 'abc')).stdout, 'abc');
    assert.equal((await run(['cat'], { input: Buffer.from('xyz') })).stdout, 'xyz');
    assert.equal((await run(['cat'])).code, 0);
  });

  it('leaves stdin open when asked: cat then runs until the timeout (124)', async () => {
    const r = await run(['cat'], { closeStdin: false, timeoutMs: 300 });
    assert.equal(r.code, 124);
    assert.match(r.stderr, /timed out after 300 ms/);
  });

  it('env replaces the environment instead of extending it', async () => {
    const r = await run(['sh', '-c', 'echo "${FOO:-none} ${HOME:-nohome}"'], { env: { FOO: 'x', PATH: process.env['PATH'] } });
    assert.equal(r.stdout, 'x nohome\n');
  });

  it('killAfterMs and killWhen report a SIGKILL (code 137, signal), not a timeout', async () => {
    const a = await run(['sleep', '5'], { killAfterMs: 100 });
    assert.deepEqual([a.code, a.signal], [137, 'SIGKILL']);
    let seen = 0;
    const b = await run(['sleep', '5'], { killWhen: (pid) => pid > 0 && ++seen > 3 });
    assert.deepEqual([b.code, b.signal], [137, 'SIGKILL']);
  });

  it('rejects when the command cannot be started; runOk throws on a non-zero exit', async () => {
    await assert.rejects(run(['/nonexistent/weft-no-such-binary']), /ENOENT/);
    await assert.rejects(run([]), /empty command/);
    assert.equal(await runOk(['echo', 'ok']), 'ok\n');
    await assert.rejects(runOk(['sh', '-c', 'echo nope >&2; exit 2']), /failed \(2\): nope/);
  });
});

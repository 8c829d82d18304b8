import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAgentLog } from '../../../agent/log.ts';
import { logPassTiming, passRecord } from '../../../agent/pass-timing.ts';

const timing = { why: 'lease,periodic', sliced: true, lateMs: 12.34, slicesMs: [10.04, 20.06, 5], wallMs: 50.5, interleaved: 2 };

void describe('passRecord', () => {
  it('rounds to 0.1 ms and sums the slices into busyMs', () => {
    assert.deepEqual(passRecord(timing), { trigger: 'lease,periodic', sliced: true, lateMs: 12.3, slicesMs: [10, 20.1, 5], busyMs: 35.1, wallMs: 50.5, interleaved: 2 });
  });
});

void describe('logPassTiming', () => {
  it('logs each pass at debug only', () => {
    for (const level of ['debug', 'info'] as const) {
      const lines: string[] = [];
      const t = logPassTiming(createAgentLog(level, (l) => lines.push(l)));
      t.onPass(timing);
      t.stop();
      const passes = lines.map((l) => JSON.parse(l) as { msg: string; busyMs?: number }).filter((r) => r.msg === 'pass');
      assert.equal(passes.length, level === 'debug' ? 1 : 0, level);
      if (level === 'debug') assert.equal(passes[0]?.busyMs, 35.1);
    }
  });

  it('reports an event loop held past the stall threshold, with the CPU spent in it', async () => {
    const lines: string[] = [];
    const t = logPassTiming(createAgentLog('debug', (l) => lines.push(l)));
    await new Promise((r) => setTimeout(r, 30));
    // Held for 120 ms of this process's CPU, not of wall time: on a busy machine a wall-time loop gets
    // a fraction of a core, and the stall it makes is one the process waited through, not spent.
    const c0 = process.cpuUsage();
    const spentUs = (): number => { const d = process.cpuUsage(c0); return d.user + d.system; };
    while (spentUs() < 120_000) { /* the loop held */ }
    await new Promise((r) => setTimeout(r, 40));
    t.stop();
    const stalls = lines.map((l) => JSON.parse(l) as { msg: string; lateMs: number; cpuMs: number }).filter((r) => r.msg === 'loop stall');
    assert.ok(stalls.some((s) => s.lateMs >= 80 && s.cpuMs >= 50), lines.join(''));
  });
});

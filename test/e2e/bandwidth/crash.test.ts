// SIGKILL during bandwidth ADD at random times: whatever step it reached (root qdisc, ifb, ifb
// qdisc, redirect), DEL, or GC with an empty valid list, leaves no ifb; DEL also leaves no qdisc.
// (GC leaves the qdiscs on the host veth: they belong to the veth, which the interface plugin's GC removes.)
// CRASH_TRIALS sizes the run (default 30).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CniRunner } from '../../../testkit/cni-runner.ts';
import { Topology, type SimPod } from '../../../testkit/topology.ts';
import { isRoot } from '../../../testkit/netns.ts';
import { BIN_DIR, bandwidthConfList, nodeIfbs, nodeQdiscs, runBandwidth } from './helpers.ts';

const TRIALS = Number(process.env['CRASH_TRIALS'] ?? 30);
const missing = ['bridge', 'host-local', 'bandwidth'].filter((b) => !existsSync(join(BIN_DIR, b)));
const skip = !isRoot() ? 'needs root' : missing.length > 0 ? `dist/bin/{${missing.join(',')}} missing: run npm run build` : false;
const LIMITS = { ingressRate: 8_000_000, ingressBurst: 800_000, egressRate: 4_000_000, egressBurst: 400_000 };

describe('bandwidth ADD killed at random points', { skip, timeout: 300_000 }, () => {
  let topo: Topology;
  let pod: SimPod;
  let prev: Record<string, unknown>;
  const node = () => topo.nodes[0]?.netns ?? '';
  const stdin = (extra: Record<string, unknown> = {}) => ({ cniVersion: '1.1.0', name: 'bwcrash', type: 'bandwidth', ...LIMITS, prevResult: prev, ...extra });

  before(async () => {
    topo = await Topology.create({ nodes: 1 });
    const conf = bandwidthConfList('bwcrash', mkdtempSync(join(topo.dir, 'ipam-')), '10.79.0.0/24');
    const plain = new CniRunner({ ...conf, cniVersion: '1.1.0', plugins: conf.plugins.filter((p) => p.type === 'bridge') }, { binDirs: [BIN_DIR], nodeNetns: node() });
    const n = topo.nodes[0];
    assert.ok(n);
    pod = await topo.addPod(n, 1);
    prev = await plain.add({ containerId: 'crash', netns: pod.path, ifName: 'eth0' });
  });
  after(() => topo?.destroySync());

  it(`${TRIALS} SIGKILL trials, then DEL or GC leaves nothing`, async (t) => {
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const a = await runBandwidth(node(), { command: 'ADD', stdin: stdin(), containerId: 'crash', netns: pod.path });
      assert.equal(a.code, 0, a.stdout);
      times.push(a.ms);
      assert.equal((await runBandwidth(node(), { command: 'DEL', stdin: stdin(), containerId: 'crash', netns: pod.path })).code, 0);
    }
    // The kernel changes happen in the last few ms of an ADD (start-up is most of it): kills are drawn
    // between the latest one that found nothing done and the earliest one that let the ADD complete.
    let lo = Math.min(...times) * 0.6;
    let hi = Math.max(...times) * 1.1;
    const reached = new Map<string, number>();
    const problems: string[] = [];
    for (let i = 0; i < TRIALS; i++) {
      const useGc = i % 3 === 2;
      const kill = lo + Math.random() * (hi - lo);
      const r = await runBandwidth(node(), { command: 'ADD', stdin: stdin(), containerId: 'crash', netns: pod.path, killAfterMs: kill });
      const state = r.code === 0 ? 'completed' : `${(await nodeQdiscs(node())).length} qdiscs/${(await nodeIfbs(node())).length} ifb`;
      if (state === 'completed') hi = kill;
      else if (state === '0 qdiscs/0 ifb') lo = kill;
      if (hi - lo < 2) [lo, hi] = [kill - 6, kill + 6]; // timing drifted past the window: widen around here
      reached.set(state, (reached.get(state) ?? 0) + 1);
      const c = useGc
        ? await runBandwidth(node(), { command: 'GC', stdin: { cniVersion: '1.1.0', name: 'bwcrash', type: 'bandwidth', 'cni.dev/valid-attachments': [] } })
        : await runBandwidth(node(), { command: 'DEL', stdin: stdin(), containerId: 'crash', netns: pod.path });
      const what = `trial ${i} (kill at ${kill.toFixed(0)} ms, reached ${state}, ${useGc ? 'GC' : 'DEL'})`;
      if (c.code !== 0) problems.push(`${what}: cleanup failed: ${c.stdout}`);
      const ifbs = await nodeIfbs(node());
      const qdiscs = useGc ? [] : await nodeQdiscs(node());
      if (ifbs.length > 0 || qdiscs.length > 0) problems.push(`${what}: left ${[...ifbs, ...qdiscs.map((q) => `${q.kind} on ${q.dev}`)].join(', ')}`);
      // The next trial starts from nothing (GC leaves the veth's qdiscs to the veth's owner).
      await runBandwidth(node(), { command: 'DEL', stdin: stdin(), containerId: 'crash', netns: pod.path });
    }
    t.diagnostic(`states at the kill: ${[...reached].map(([k, v]) => `${k}: ${v}`).join(', ')}`);
    assert.deepEqual(problems, []);
    assert.ok(reached.size >= 2, 'the kills landed at one point only: the timing window is off');
  });
});

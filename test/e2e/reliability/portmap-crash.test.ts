// SIGKILL during portmap ADD (issue 10), chained after a completed bridge ADD as a runtime runs a
// conflist: whatever the kill left (nothing, or some of the attachment's nft elements), DEL of the
// chain (portmap then bridge, without prevResult, as after a failed ADD) or GC with an empty valid
// list (cniVersion 1.1.0) must leave no portmap element, no masquerade element, no veth, no lease.
// CRASH_TRIALS sizes the run (default 40 here and in bridge-crash; test:stress runs 200).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { rootOnly } from '../../../testkit/netns.ts';
import { bridgeConf, hostVeths, makeLab, nftElements, podState, reservations, runPlugin } from './harness.ts';

const TRIALS = Number(process.env['CRASH_TRIALS'] ?? 40);

describe('portmap ADD killed at random points', rootOnly(), () => {
  test(`${TRIALS} SIGKILL trials of portmap after bridge, then DEL or GC leaves nothing`, async (t) => {
    const lab = await makeLab(1, 'pmcrash');
    const pod = lab.pods[0];
    assert.ok(pod);
    const br = bridgeConf(lab.dir);
    const pm = (prev: unknown, id: number): Record<string, unknown> => ({
      cniVersion: '1.0.0', name: 'relnet', type: 'portmap', snat: true, prevResult: prev,
      runtimeConfig: { portMappings: [{ hostPort: 31000 + id, containerPort: 80, protocol: 'tcp' }, { hostPort: 31000 + id, containerPort: 53, protocol: 'udp' }] },
    });
    const gc = (type: string): Record<string, unknown> => ({ ...br, type, cniVersion: '1.1.0', 'cni.dev/valid-attachments': [] });
    const portmapElems = (): Promise<string[]> => nftElements(lab.node, /^portmap-/);
    try {
      // Timing of portmap ADD alone (the bridge's result as prevResult).
      const times: number[] = [];
      for (let i = 0; i < 3; i++) {
        const b = await runPlugin(lab.node, 'bridge', { command: 'ADD', containerId: `warm${i}`, netns: pod.path }, br);
        assert.equal(b.code, 0, b.stdout);
        const p = await runPlugin(lab.node, 'portmap', { command: 'ADD', containerId: `warm${i}`, netns: pod.path }, pm(JSON.parse(b.stdout), 999));
        assert.equal(p.code, 0, p.stdout);
        times.push(p.ms);
        assert.equal((await runPlugin(lab.node, 'portmap', { command: 'DEL', containerId: `warm${i}`, netns: pod.path }, pm(undefined, 999))).code, 0);
        assert.equal((await runPlugin(lab.node, 'bridge', { command: 'DEL', containerId: `warm${i}`, netns: pod.path }, br)).code, 0);
      }
      let window = Math.min(...times);
      const hits = { nothing: 0, elements: 0, completed: 0 };
      const problems: string[] = [];
      for (let i = 0; i < TRIALS; i++) {
        const id = `pmcrash${i}`;
        const b = await runPlugin(lab.node, 'bridge', { command: 'ADD', containerId: id, netns: pod.path }, br);
        assert.equal(b.code, 0, b.stdout);
        const kill = window * (0.5 + Math.random() * 0.6);
        const r = await runPlugin(lab.node, 'portmap', { command: 'ADD', containerId: id, netns: pod.path, killAfterMs: kill }, pm(JSON.parse(b.stdout), i));
        const mine = (await portmapElems()).filter((e) => e.includes(id));
        const step = r.code === 0 ? 'completed' : mine.length === 0 ? 'nothing' : 'elements';
        hits[step]++;
        window *= step === 'completed' ? 0.93 : step === 'nothing' ? 1.07 : 1;
        const useGc = i % 3 === 2;
        const what = `trial ${i} (kill at ${kill.toFixed(0)} ms, ${r.signal ?? `exit ${r.code}`}, ${step} with ${mine.length} elements, cleanup ${useGc ? 'GC' : 'DEL'})`;
        const runs = useGc
          ? [await runPlugin(lab.node, 'portmap', { command: 'GC' }, gc('portmap')), await runPlugin(lab.node, 'bridge', { command: 'GC' }, gc('bridge'))]
          : [await runPlugin(lab.node, 'portmap', { command: 'DEL', containerId: id, netns: pod.path }, pm(undefined, i)), await runPlugin(lab.node, 'bridge', { command: 'DEL', containerId: id, netns: pod.path }, br)];
        for (const c of runs) if (c.code !== 0) problems.push(`${what}: cleanup failed: ${c.stdout}`);
        const left: string[] = [];
        const pmLeft = await portmapElems();
        if (pmLeft.length > 0) left.push(`portmap elements ${pmLeft.slice(0, 3).join(' ')}`);
        const masq = await nftElements(lab.node);
        if (masq.length > 0) left.push(`masquerade elements ${masq.join(' ')}`);
        const veths = await hostVeths(lab.node);
        if (veths.length > 0) left.push(`veths ${veths.join(' ')}`);
        if ((await podState(pod)).link) left.push('pod eth0');
        if (reservations(lab.dir, 'relnet').size > 0) left.push(`leases ${[...reservations(lab.dir, 'relnet').keys()].join(' ')}`);
        if (left.length > 0) problems.push(`${what}: left ${left.join('; ')}`);
      }
      t.diagnostic(`portmap ADD ${Math.min(...times).toFixed(0)} ms; ${TRIALS} trials: killed before any element ${hits.nothing}, with elements ${hits.elements}, completed ${hits.completed}; ${problems.length} problems`);
      assert.deepEqual(problems.slice(0, 10), [], `${problems.length} problems`);
    } finally {
      await lab.destroy();
      rmSync(lab.dir, { recursive: true, force: true });
    }
  });
});

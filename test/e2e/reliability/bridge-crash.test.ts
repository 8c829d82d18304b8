// SIGKILL during bridge ADD at random times (issue 10): after each kill the state left behind tells
// which step the plugin had reached (veth, IPAM lease, pod addresses, pod routes, masquerade element);
// then DEL (or GC with an empty valid list, cniVersion 1.1.0) must leave nothing of the attachment,
// whatever the step (also a pair killed before its host end was tagged: GC knows it by its name).
// CRASH_TRIALS sizes the run (default 40; test:stress runs 200).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { rootOnly } from '../../../testkit/netns.ts';
import { bridgeConf, describeVeths, hostVeths, makeLab, nftElements, podState, reservations, runPlugin } from './harness.ts';

const TRIALS = Number(process.env['CRASH_TRIALS'] ?? 40);
const STEPS = ['nothing', 'veth', 'ipam', 'addresses', 'routes', 'masquerade', 'completed'] as const;
type Step = (typeof STEPS)[number];

describe('bridge ADD killed at random points', rootOnly(), () => {
  test(`${TRIALS} SIGKILL trials, then DEL or GC leaves nothing`, async (t) => {
    const lab = await makeLab(1, 'crash');
    const pod = lab.pods[0];
    assert.ok(pod);
    const conf = bridgeConf(lab.dir);
    const gcConf = { ...bridgeConf(lab.dir, { cniVersion: '1.1.0' }), 'cni.dev/valid-attachments': [] };
    try {
      // Timing: the mean of a few complete ADDs (the first one also creates the bridge and nft table).
      const times: number[] = [];
      for (let i = 0; i < 4; i++) {
        const a = await runPlugin(lab.node, 'bridge', { command: 'ADD', containerId: `warm${i}`, netns: pod.path }, conf);
        assert.equal(a.code, 0, a.stdout);
        if (i > 0) times.push(a.ms);
        assert.equal((await runPlugin(lab.node, 'bridge', { command: 'DEL', containerId: `warm${i}`, netns: pod.path }, conf)).code, 0);
      }
      // The kill window adapts to the machine's pace (other work makes ADDs slower or faster): a kill that
      // found nothing done widens it, a completed ADD narrows it, so trials keep landing among the steps.
      let addMs = Math.min(...times);
      const hits = new Map<Step, number>(STEPS.map((s) => [s, 0]));
      const problems: string[] = [];
      for (let i = 0; i < TRIALS; i++) {
        const id = `crash${i}`;
        const useGc = i % 4 === 3;
        // Node start-up is most of an ADD, so three trials in four die late in it, where the steps are.
        const kill = i % 4 === 0 ? Math.random() * addMs * 1.1 : addMs * (0.6 + Math.random() * 0.45);
        const r = await runPlugin(lab.node, 'bridge', { command: 'ADD', containerId: id, netns: pod.path, killAfterMs: kill }, conf);
        const step = r.code === 0 ? 'completed' : await reachedStep(id);
        if (step === 'completed') addMs *= 0.93;
        else if (step === 'nothing') addMs *= 1.07;
        hits.set(step, (hits.get(step) ?? 0) + 1);
        const what = `trial ${i} (kill at ${kill.toFixed(0)} ms, ${r.signal ?? `exit ${r.code}`}, reached ${step}, cleanup ${useGc ? 'GC' : 'DEL'})`;
        const c = useGc
          ? await runPlugin(lab.node, 'bridge', { command: 'GC' }, gcConf)
          : await runPlugin(lab.node, 'bridge', { command: 'DEL', containerId: id, netns: pod.path }, conf);
        if (c.code !== 0) problems.push(`${what}: cleanup failed: ${c.stdout}`);
        const left = await leftovers(id);
        if (left.length > 0) {
          // Nothing is excused: the host veth's name says its network and attachment from the creating
          // RTM_NEWLINK on, so GC attributes even a pair whose ADD died before it was tagged.
          problems.push(`${what}: left ${left.join(', ')}`);
          // Clean by DEL so the next trial starts from nothing; that must work.
          await runPlugin(lab.node, 'bridge', { command: 'DEL', containerId: id, netns: pod.path }, conf);
          const still = await leftovers(id);
          if (still.length > 0) problems.push(`${what}: DEL after the leftovers left ${still.join(', ')}`);
        }
      }
      const summary = STEPS.map((s) => `${s}:${hits.get(s)}`).join(' ');
      t.diagnostic(`ADD ${Math.min(...times).toFixed(0)} ms at start, kill window ${addMs.toFixed(0)} ms at end; ${TRIALS} trials reached ${summary}; ${problems.length} with leftovers or failed cleanup`);
      assert.deepEqual(problems.slice(0, 10), [], `${problems.length} problems`);
    } finally {
      await lab.destroy();
      rmSync(lab.dir, { recursive: true, force: true });
    }

    /** The furthest ADD step whose effect is visible. */
    async function reachedStep(id: string): Promise<Step> {
      const veth = (await hostVeths(lab.node, id)).length > 0;
      const p = await podState(pod as NonNullable<typeof pod>);
      const lease = [...reservations(lab.dir, 'relnet').values()].includes(id);
      const elem = (await nftElements(lab.node)).some((e) => e.includes(`"${id}/eth0"`));
      if (elem) return 'masquerade';
      if (p.routes.length > 0) return 'routes';
      if (p.addrs.length > 0) return 'addresses';
      if (lease) return 'ipam';
      if (veth || p.link) return 'veth';
      return 'nothing';
    }

    async function leftovers(id: string): Promise<string[]> {
      const out: string[] = [];
      const veths = await describeVeths(lab.node);
      if (veths.length > 0) out.push(`host veths ${veths.join(' ')}`);
      if ((await podState(pod as NonNullable<typeof pod>)).link) out.push('pod eth0');
      const held = [...reservations(lab.dir, 'relnet').entries()].filter(([, c]) => c === id).map(([ip]) => ip);
      if (held.length > 0) out.push(`IPAM ${held.join(' ')}`);
      const el = await nftElements(lab.node);
      if (el.length > 0) out.push(`nft elements ${el.join(' ')}`);
      return out;
    }
  });
});

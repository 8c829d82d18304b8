// Storms (issue 10): many parallel ADD and DEL, then a long run of mixed ADD/DEL/CHECK on a
// bridge + host-local + portmap conflist, with the node checked against a model after each phase:
// IPAM reservations, host veths, pod interfaces, masquerade and portmap elements are exactly those of
// the live attachments. GC with the live list changes nothing; GC with an empty list removes all.
// STORM_PARALLEL / STORM_OPS / STORM_CONCURRENCY size the run (npm test: 16 / 100 / 8; stress: 64 / 1000 / 16).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { rootOnly, type TestNetns } from '../../../testkit/netns.ts';
import { CniRunner, PluginFailure, type ConfList } from '../../../testkit/cni-runner.ts';
import { DIST_BIN, hostVeths, makeLab, nftElements, podState, reservations, runPlugin } from './harness.ts';

const PARALLEL = Number(process.env['STORM_PARALLEL'] ?? 16);
const OPS = Number(process.env['STORM_OPS'] ?? 100);
const CONCURRENCY = Number(process.env['STORM_CONCURRENCY'] ?? 8);
const NET = 'stormnet';

interface Live { ip: string; hostPort: number }

function conflist(dir: string): ConfList {
  return {
    cniVersion: '1.1.0', name: NET,
    plugins: [
      { type: 'bridge', bridge: 'stormbr0', isGateway: true, ipMasq: true, ipam: { type: 'host-local', ranges: [[{ subnet: '10.62.0.0/16' }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: dir } },
      { type: 'portmap', snat: true, capabilities: { portMappings: true } },
    ],
  };
}

/** Runs `jobs` with at most `n` at a time. */
async function pool<T>(n: number, jobs: Array<() => Promise<T>>): Promise<T[]> {
  const out: T[] = new Array<T>(jobs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const i = next++;
      const job = jobs[i];
      if (job !== undefined) out[i] = await job();
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, jobs.length) }, worker));
  return out;
}

describe('storms of ADD/DEL on bridge + host-local + portmap', rootOnly(), () => {
  test(`${PARALLEL} parallel ADD then DEL, ${OPS} mixed operations (${CONCURRENCY} at a time)`, async (t) => {
    const lab = await makeLab(Math.max(PARALLEL, CONCURRENCY * 2), 'storm');
    const runner = new CniRunner(conflist(lab.dir), { binDirs: [DIST_BIN], nodeNetns: lab.node.name, timeoutMs: 60_000 });
    const live = new Map<number, Live>();
    const cid = (i: number): string => `storm${i}`;
    const att = (i: number, pod: TestNetns) => ({ containerId: cid(i), netns: pod.path, ifName: 'eth0', runtimeConfig: { portMappings: [{ hostPort: 30000 + i, containerPort: 80, protocol: 'tcp' }] } });
    const podOf = (i: number): TestNetns => {
      const p = lab.pods[i];
      if (p === undefined) throw new Error(`no pod ${i}`);
      return p;
    };
    const add = async (i: number): Promise<void> => {
      const r = await runner.add(att(i, podOf(i)));
      const ip = (r['ips'] as Array<{ address: string }>)[0]?.address.split('/')[0] ?? '';
      live.set(i, { ip, hostPort: 30000 + i });
    };
    const del = async (i: number): Promise<void> => {
      await runner.del(att(i, podOf(i)));
      live.delete(i);
    };

    /** Compares the node with the model; returns the differences. */
    const verify = async (phase: string): Promise<string[]> => {
      const problems: string[] = [];
      const want = new Map([...live.entries()].map(([i, l]) => [l.ip, cid(i)]));
      const held = reservations(lab.dir, NET);
      assert.deepEqual([...held.entries()].sort(), [...want.entries()].sort(), `${phase}: IPAM reservations`);
      const veths = await hostVeths(lab.node);
      if (veths.length !== live.size) problems.push(`${phase}: ${veths.length} host veths for ${live.size} attachments`);
      const masq = (await nftElements(lab.node)).map((e) => /"comment":"([^"]*)"/.exec(e)?.[1] ?? '?').sort();
      const wantMasq = [...live.keys()].map((i) => `${cid(i)}/eth0`).sort();
      if (JSON.stringify(masq) !== JSON.stringify(wantMasq)) problems.push(`${phase}: masquerade elements ${masq.length} (want ${wantMasq.length}): ${masq.filter((m) => !wantMasq.includes(m)).slice(0, 5).join(' ')}`);
      const dnat = await nftElements(lab.node, /^portmap-dnat4$/);
      const ports = dnat.map((e) => /"tcp",\s*(\d+)|(\d{5})/.exec(e)?.slice(1).find((x) => x !== undefined) ?? '?').sort();
      const wantPorts = [...live.values()].map((l) => String(l.hostPort)).sort();
      if (JSON.stringify(ports) !== JSON.stringify(wantPorts)) problems.push(`${phase}: portmap dnat4 ports ${ports.join(',')} want ${wantPorts.join(',')}`);
      for (const [i, l] of live) {
        const p = await podState(podOf(i));
        if (!p.addrs.some((a) => a.startsWith(`${l.ip}/`))) problems.push(`${phase}: pod ${i} lacks ${l.ip} (has ${p.addrs.join(' ')})`);
      }
      return problems;
    };

    try {
      const problems: string[] = [];
      // Phase 1: all ADDs at once, then all DELs at once.
      const t0 = performance.now();
      const adds = await Promise.allSettled(Array.from({ length: PARALLEL }, (_, i) => add(i)));
      const addFail = adds.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
      assert.deepEqual(addFail.slice(0, 5), [], `${addFail.length} parallel ADDs failed`);
      problems.push(...(await verify(`after ${PARALLEL} parallel ADD`)));
      const dels = await Promise.allSettled(Array.from({ length: PARALLEL }, (_, i) => del(i)));
      const delFail = dels.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
      assert.deepEqual(delFail.slice(0, 5), [], `${delFail.length} parallel DELs failed`);
      problems.push(...(await verify(`after ${PARALLEL} parallel DEL`)));
      const burstMs = performance.now() - t0;

      // Phase 2: mixed operations; one operation per pod at a time (a runtime never overlaps them).
      const busy = new Set<number>();
      const slots = Math.max(PARALLEL, CONCURRENCY * 2);
      let seq = 0;
      const counts = { ADD: 0, DEL: 0, CHECK: 0 };
      const failures: string[] = [];
      const op = async (): Promise<void> => {
        let i: number;
        do i = Math.floor(Math.random() * slots); while (busy.has(i));
        busy.add(i);
        try {
          const kind = live.has(i) ? (Math.random() < 0.75 ? 'DEL' : 'CHECK') : 'ADD';
          counts[kind]++;
          if (kind === 'ADD') await add(i);
          else if (kind === 'DEL') await del(i);
          else await runner.check(att(i, podOf(i)));
        } catch (e) {
          failures.push(`op ${seq}: ${e instanceof PluginFailure ? e.message : String(e)}`.slice(0, 400));
        } finally {
          busy.delete(i);
        }
        seq++;
      };
      const t1 = performance.now();
      await pool(CONCURRENCY, Array.from({ length: OPS }, () => op));
      const mixedMs = performance.now() - t1;
      assert.deepEqual(failures.slice(0, 5), [], `${failures.length} of ${OPS} mixed operations failed`);
      problems.push(...(await verify(`after ${OPS} mixed operations (${live.size} live)`)));

      // GC with the live list must keep everything; with an empty list it must remove everything.
      const gcConf = (valid: Array<{ containerID: string; ifname: string }>) => ({ ...conflist(lab.dir).plugins[0], cniVersion: '1.1.0', name: NET, 'cni.dev/valid-attachments': valid });
      const validNow = [...live.keys()].map((i) => ({ containerID: cid(i), ifname: 'eth0' }));
      for (const plugin of ['bridge', 'portmap']) {
        const g = await runPlugin(lab.node, plugin, { command: 'GC' }, { ...gcConf(validNow), type: plugin });
        assert.equal(g.code, 0, `GC ${plugin}: ${g.stdout}`);
      }
      problems.push(...(await verify('after GC with the live attachments')));
      for (const plugin of ['bridge', 'portmap']) {
        const g = await runPlugin(lab.node, plugin, { command: 'GC' }, { ...gcConf([]), type: plugin });
        assert.equal(g.code, 0, `GC ${plugin}: ${g.stdout}`);
      }
      const gone = [...live.keys()];
      live.clear();
      problems.push(...(await verify('after GC with an empty list')));
      for (const i of gone) if ((await podState(podOf(i))).link) problems.push(`after GC: pod ${i} still has eth0`);
      t.diagnostic(`${PARALLEL} parallel ADD+DEL in ${burstMs.toFixed(0)} ms; ${OPS} mixed ops (ADD ${counts.ADD}, DEL ${counts.DEL}, CHECK ${counts.CHECK}) in ${mixedMs.toFixed(0)} ms; ${gone.length} removed by GC; ${problems.length} differences from the model`);
      assert.deepEqual(problems, []);
    } finally {
      await lab.destroy();
      rmSync(lab.dir, { recursive: true, force: true });
    }
  });
});

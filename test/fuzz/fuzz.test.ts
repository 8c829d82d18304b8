// Property/fuzz suite over every plugin's stdin and env (issue 10): cases generated from the JSON
// Schemas plus hand-written attacks, run in-process by a worker inside a node namespace the test made,
// and a sample through the built binaries. Each case must print one CNI error JSON with a fitting
// code (or a valid result, then DEL), and the node (links, addresses, routes, nft, data dirs) must be
// unchanged after every batch. FUZZ_CASES / FUZZ_BIN_CASES size the run; FUZZ_SEED replays one;
// FUZZ_PLUGINS=a,b narrows it; FUZZ_ONLY=<i> runs only case i.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestNetns, rootOnly, run, type TestNetns } from '../../testkit/netns.ts';
import { makeCase, type CaseContext, type FuzzCase } from './cases.ts';
import { diffNode, snapshotNode, type NodeState } from './node-state.ts';
import { judge } from './oracle.ts';
import { runSeed } from './prng.ts';
import { schemaOf, selectedTargets, validatorOf, type FuzzTarget } from './targets.ts';
import { FuzzWorker, ROOT, privateBinDir, runBinary, type CaseOutput } from './worker-client.ts';

const CASES = Number(process.env['FUZZ_CASES'] ?? 300);
const BIN_CASES = Number(process.env['FUZZ_BIN_CASES'] ?? 30);
const BATCH = 100;
const ONLY = process.env['FUZZ_ONLY'];
const seed = runSeed();
// The host's default data dirs: a case whose config loses our dataDir would write here.
const HOST_DATA_DIRS = ['/var/lib/cni/networks', '/var/lib/cni/flannel', '/var/lib/cni/results'];

function readdirRecursive(d: string): string[] {
  try {
    return readdirSync(d, { recursive: true }).map(String);
  } catch {
    return [];
  }
}
const targets = selectedTargets();

/** Tallies of one run, printed as test diagnostics (the closing note's figures). */
interface Tally { cases: number; errors: number; successes: number; failures: string[]; leftovers: number; codes: Map<number, number>; ms: number }

function newTally(): Tally {
  return { cases: 0, errors: 0, successes: 0, failures: [], leftovers: 0, codes: new Map(), ms: 0 };
}

describe(`fuzz (seed ${seed}; FUZZ_SEED=${seed} replays)`, rootOnly(), () => {
  let node: TestNetns;
  const pods = new Map<string, TestNetns>();
  let tmp: string;
  let worker: FuzzWorker;
  let cwd: string;
  let binDir: string;

  before(async () => {
    binDir = privateBinDir();
    for (const t of targets) {
      if (!existsSync(join(binDir, t.name))) throw new Error(`dist/bin/${t.name} missing: run npm run build first`);
      if (typeof t.schema === 'string' && !existsSync(join(ROOT, 'gen', 'validators', `${t.schema}.js`))) throw new Error(`gen/validators/${t.schema}.js missing: run npm run build first`);
    }
    node = await createTestNetns('weft-t-fz');
    await run(['ip', '-n', node.name, 'link', 'set', 'lo', 'up']);
    for (const t of targets) pods.set(t.name, await createTestNetns('weft-t-fzp'));
    tmp = mkdtempSync(join(tmpdir(), 'weft-fuzz-'));
    cwd = join(tmp, 'cwd');
    mkdirSync(cwd);
    execFileSync('mkfifo', [join(tmp, 'fifo')]);
    symlinkSync('/etc/passwd', join(tmp, 'link'));
    targets.forEach((t, i) => {
      const ctx = ctxFor(t, i);
      mkdirSync(ctx.scratch);
      t.prepare?.(ctx);
    });
    worker = await FuzzWorker.start(node.name, targets.map((t) => t.name), cwd);
  });

  after(async () => {
    await worker?.close();
    if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
  });

  function ctxFor(t: FuzzTarget, i: number): CaseContext {
    const pod = pods.get(t.name);
    if (pod === undefined) throw new Error(`no pod for ${t.name}`);
    return { dataDir: join(tmp, 'ipam'), podNetns: pod.path, octet: 100 + i, scratch: join(tmp, `scratch-${t.name}`), distBin: binDir, nodeName: node.name, fifo: join(tmp, 'fifo'), symlink: join(tmp, 'link') };
  }

  const snap = (t: FuzzTarget): Promise<NodeState> =>
    snapshotNode(node.name, [pods.get(t.name)?.name ?? ''], [join(tmp, 'ipam'), cwd, join(tmp, `scratch-${t.name}`)]);

  /** Runs `count` cases of `t` (from index `first`) through `exec`, judging each and diffing the node per batch. */
  async function fuzz(t: FuzzTarget, ti: number, first: number, count: number, exec: (c: FuzzCase) => Promise<CaseOutput>, binary = false): Promise<Tally> {
    const schema = schemaOf(t);
    const validate = await validatorOf(t);
    const ctx = ctxFor(t, ti);
    const tally = newTally();
    // Warm-up: one valid ADD+DEL creates what stays by design (the bridge, the nft table) before the baseline.
    const warm = makeCase(t, schema, validate, ctx, seed, 0);
    const base: FuzzCase = { ...warm, id: `fzwarm${ti}`, label: 'warm-up', stdin: Buffer.from(JSON.stringify(t.baseConfig(ctx))), expect: { ok: true, codes: [] } };
    base.env = { ...base.env, CNI_CONTAINERID: base.id, CNI_NETNS: ctx.podNetns, CNI_IFNAME: 'eth0', CNI_ARGS: '', CNI_PATH: binDir, CNI_COMMAND: 'ADD' };
    const wa = await exec(base);
    assert.equal(wa.exitCode, 0, `warm-up ADD of ${t.name} failed: ${wa.stdout}${wa.threw ?? ''}`);
    const wd = await exec({ ...base, env: { ...base.env, CNI_COMMAND: 'DEL' } });
    assert.equal(wd.exitCode, 0, `warm-up DEL of ${t.name} failed: ${wd.stdout}`);
    let baseline = await snap(t);
    const batchLabels: string[] = [];
    for (let i = first; i < first + count; i++) {
      if (ONLY !== undefined && Number(ONLY) !== i) continue;
      const c = makeCase(t, schema, validate, ctx, seed, i);
      if (c.inProcessOnly === true && binary) continue; // execve cannot pass a NUL in env
      const out = await exec(c);
      tally.cases++;
      tally.ms += out.ms;
      const v = judge(c, out);
      const where = `seed=${seed} case=${i} ${t.name} [${c.label}]`;
      if (v.problem !== undefined) tally.failures.push(`${where}: ${v.problem}`);
      if (v.code !== undefined) tally.codes.set(v.code, (tally.codes.get(v.code) ?? 0) + 1);
      if (v.ok) {
        tally.successes++;
        // A valid case leaves an attachment (ADD) behind: DEL it as a runtime would, and it must succeed.
        if (c.env['CNI_COMMAND'] === 'ADD') {
          const d = await exec({ ...c, env: { ...c.env, CNI_COMMAND: 'DEL' } });
          if (d.exitCode !== 0) tally.failures.push(`${where}: DEL after a successful ADD failed: ${d.stdout.slice(0, 300)}`);
        }
      } else {
        tally.errors++;
      }
      batchLabels.push(`${i} [${c.label}]`);
      if (batchLabels.length >= BATCH || i === first + count - 1) {
        const now = await snap(t);
        const d = diffNode(baseline, now);
        if (d.length > 0) {
          tally.leftovers += d.length;
          tally.failures.push(`seed=${seed} ${t.name} batch ending at case ${i} changed the node:\n  ${d.slice(0, 20).join('\n  ')}\n  cases: ${batchLabels.join(', ')}`);
          baseline = now;
        }
        batchLabels.length = 0;
      }
    }
    return tally;
  }

  /** Entries a fuzz case left in the host's default CNI data dirs (shared filesystem; must be none). */
  function hostDirLeaks(): string[] {
    const out: string[] = [];
    for (const d of HOST_DATA_DIRS) {
      for (const f of readdirRecursive(d)) if (/fuzz|fz[a-z]/.test(f)) out.push(join(d, f));
    }
    return out;
  }

  function report(t: FuzzTarget, how: string, tally: Tally, diag: (s: string) => void): void {
    const codes = [...tally.codes.entries()].sort((a, b) => a[0] - b[0]).map(([c, n]) => `${c}:${n}`).join(' ');
    diag(`${t.name} ${how}: ${tally.cases} cases (${tally.errors} errors, ${tally.successes} successes; codes ${codes}), ${tally.failures.length} failures, ${tally.leftovers} leftover lines, ${(tally.ms / Math.max(1, tally.cases)).toFixed(1)} ms/case`);
  }

  targets.forEach((t, ti) => {
    void test(`${t.name}: ${CASES} cases in-process`, async (tc) => {
      const tally = await fuzz(t, ti, 1, CASES, (c) => worker.run(c));
      for (const leak of hostDirLeaks()) tally.failures.push(`left on the host filesystem: ${leak}`);
      report(t, 'in-process', tally, (s) => tc.diagnostic(s));
      assert.equal(tally.failures.length, 0, `${tally.failures.length} failures:\n${tally.failures.slice(0, 15).join('\n')}`);
    });
    void test(`${t.name}: ${BIN_CASES} cases through dist/bin/${t.name}`, async (tc) => {
      const tally = await fuzz(t, ti, 1_000_000, BIN_CASES, (c) => runBinary(node.name, c, cwd, binDir), true);
      for (const leak of hostDirLeaks()) tally.failures.push(`left on the host filesystem: ${leak}`);
      report(t, 'binary', tally, (s) => tc.diagnostic(s));
      assert.equal(tally.failures.length, 0, `${tally.failures.length} failures:\n${tally.failures.slice(0, 15).join('\n')}`);
    });
  });
});

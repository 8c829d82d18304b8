// Installing over a plugin a runtime is executing right now: loops exec the installed `bridge`
// (CNI VERSION) without pause while `weft install` rewrites it again and again, alternating two
// different builds. Every exec must answer with a VERSION document: the installer's write+rename
// never exposes a partial file. A control shows the probe catches a naive in-place writer.
import assert from 'node:assert/strict';
import { appendFileSync, closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dirFlags, DIST_BIN, runCmd, weft, WEFT } from './helpers.ts';

const WORKERS = 3;
const INSTALLS = 12;

interface ProbeStats {
  runs: number;
  failures: string[];
}

/** Execs `bin` VERSION in `WORKERS` parallel loops until `done` resolves. */
async function probeWhile(bin: string, done: Promise<unknown>): Promise<ProbeStats> {
  const stats: ProbeStats = { runs: 0, failures: [] };
  let stop = false;
  const finished = done.finally(() => (stop = true));
  const loop = async (): Promise<void> => {
    while (!stop) {
      // exec itself fails (ETXTBSY) while any process holds the file open for writing.
      const r = await runCmd([bin], { PATH: process.env['PATH'] ?? '/usr/bin:/bin', CNI_COMMAND: 'VERSION' }).catch(
        (e: unknown) => ({ code: -1, stdout: '', stderr: `spawn failed: ${String(e)}` }),
      );
      stats.runs++;
      // A failed spawn reports on nextTick: yield to the event loop so timers (the writer) still run.
      await new Promise((r) => setImmediate(r));
      if (!answersVersion(r)) stats.failures.push(`exit ${r.code}, stdout ${JSON.stringify(r.stdout.slice(0, 80))}, stderr ${JSON.stringify(r.stderr.slice(0, 200))}`);
    }
  };
  await Promise.all([...Array.from({ length: WORKERS }, loop), finished]);
  return stats;
}

/** True when a run exited 0 with a CNI VERSION document on stdout. */
function answersVersion(r: { code: number; stdout: string }): boolean {
  try {
    return r.code === 0 && Array.isArray((JSON.parse(r.stdout) as { supportedVersions?: unknown }).supportedVersions);
  } catch {
    return false;
  }
}

describe('installing over a running plugin', () => {
  let t = '';
  let variantA = '';
  let variantB = '';
  const bin = (): string => join(t, 'opt/cni/bin/bridge');

  before(async () => {
    assert.ok(existsSync(WEFT), `${WEFT} is missing: run npm run build`);
    t = mkdtempSync(join(tmpdir(), 'weft-install-atomic-'));
    // Two different, known-good builds: a snapshot of dist/bin, and the same bundles with a trailing
    // comment: `////`, because a bundle's body is itself `//`-prefixed lines (lib/sys/code-cache.ts). Each is checked to answer VERSION before the race.
    variantA = join(t, 'variant-a');
    variantB = join(t, 'variant-b');
    for (const [dir, tail] of [[variantA, ''], [variantB, `\n//// variant b ${'x'.repeat(4096)}\n`]] as const) {
      mkdirSync(dir);
      for (const f of readdirSync(DIST_BIN)) {
        copyFileSync(join(DIST_BIN, f), join(dir, f));
        if (tail !== '' && f !== 'weft') appendFileSync(join(dir, f), tail);
      }
      const v = await runCmd([join(dir, 'bridge')], { PATH: process.env['PATH'] ?? '/usr/bin:/bin', CNI_COMMAND: 'VERSION' });
      assert.equal(v.code, 0, `${dir}/bridge VERSION: ${v.stderr}`);
    }
    const r = await weft(['install', '--backend', 'bridge', '--source', variantA, ...dirFlags(t)]);
    assert.equal(r.code, 0, r.stderr);
  });

  after(() => {
    if (t !== '') rmSync(t, { recursive: true, force: true });
  });

  test(`every exec during ${INSTALLS} re-installs answers VERSION`, async () => {
    const installs: number[] = [];
    const rewrite = (async () => {
      for (let i = 0; i < INSTALLS; i++) {
        const r = await weft(['install', '--backend', 'bridge', '--source', i % 2 === 0 ? variantB : variantA, ...dirFlags(t)]);
        assert.equal(r.code, 0, `install ${i}: ${r.stderr}`);
        installs.push(i);
      }
    })();
    const stats = await probeWhile(bin(), rewrite);
    await rewrite;
    assert.equal(installs.length, INSTALLS);
    assert.deepEqual(stats.failures, [], `${stats.failures.length} of ${stats.runs} execs failed`);
    assert.ok(stats.runs >= 2 * WORKERS, `only ${stats.runs} execs overlapped the installs`);
    // The last install (odd i) used variant A; no temp file is left in the bin dir.
    assert.deepEqual(readFileSync(bin()), readFileSync(join(variantA, 'bridge')));
    assert.deepEqual(readdirSync(join(t, 'opt/cni/bin')).filter((f) => f.startsWith('.')), []);
    process.stderr.write(`# atomic install: ${stats.runs} execs during ${INSTALLS} installs, 0 failures\n`);
  });

  test('control: the same probe catches a naive in-place rewrite', async () => {
    const data = readFileSync(join(variantB, 'bridge'));
    const naive = (async () => {
      for (let round = 0; round < 10; round++) {
        // open(O_TRUNC) + chunked writes: what `cp` over the file does; readers can see any prefix.
        const fd = openSync(bin(), 'w');
        try {
          for (let off = 0; off < data.length; off += 16 * 1024) {
            writeSync(fd, data, off, Math.min(16 * 1024, data.length - off));
            await new Promise((r) => setTimeout(r, 5));
          }
        } finally {
          closeSync(fd);
        }
      }
    })();
    const stats = await probeWhile(bin(), naive);
    await naive;
    assert.ok(stats.failures.length > 0, `no failure in ${stats.runs} execs: the probe could not tell a partial file`);
    process.stderr.write(`# naive in-place writer: ${stats.failures.length} of ${stats.runs} execs failed (expected)\n`);
  });
});

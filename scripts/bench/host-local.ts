// Benchmark: host-local ADD wall time with 250 addresses held vs none (same run, interleaved), against
// `node -e 0` and the reference Go binary. Works on temporary data dirs; needs a built dist/bin/host-local.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distBin, median, NODE_BASELINE, quantile, round, timeOnce, type BenchResult, type Command } from './util.ts';

const REFERENCE = '/usr/lib/cni/host-local';
const HELD = 250;

function conf(dataDir: string, name: string): string {
  return JSON.stringify({ cniVersion: '1.0.0', name, type: 'bridge', ipam: { type: 'host-local', dataDir, ranges: [[{ subnet: '10.60.0.0/24' }]] } });
}

function invoke(bin: string, command: string, dataDir: string, name: string, expectStatus = 0): Command {
  const env = { PATH: process.env['PATH'], CNI_COMMAND: command, CNI_CONTAINERID: 'bench', CNI_NETNS: '/var/run/netns/bench', CNI_IFNAME: 'eth0', CNI_PATH: '/usr/lib/cni' };
  return { cmd: bin, args: [], env, input: conf(dataDir, name), expectStatus };
}

/** Writes HELD reservations in the reference layout, as if HELD pods were running. */
function populate(dataDir: string, name: string): void {
  const dir = join(dataDir, name);
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < HELD; i++) writeFileSync(join(dir, `10.60.0.${i + 2}`), `held-${i}\r\neth0`);
}

/** Runs the host-local benchmark: `runs` interleaved rounds of each command (DELs untimed). */
export async function benchHostLocal(runs = 30): Promise<BenchResult[]> {
  const ours = distBin('host-local');
  const hasRef = existsSync(REFERENCE);
  const dataDir = mkdtempSync(join(tmpdir(), 'weft-bench-hl-'));
  try {
    populate(dataDir, 'held');
    populate(dataDir, 'ref-held');
    const rounds: Array<{ timed: Command; cleanup?: Command }> = [
      { timed: NODE_BASELINE },
      { timed: invoke(ours, 'VERSION', dataDir, 'empty') },
      { timed: invoke(ours, 'ADD', dataDir, 'empty'), cleanup: invoke(ours, 'DEL', dataDir, 'empty') },
      { timed: invoke(ours, 'ADD', dataDir, 'held'), cleanup: invoke(ours, 'DEL', dataDir, 'held') },
    ];
    if (hasRef) rounds.push({ timed: invoke(REFERENCE, 'ADD', dataDir, 'ref-held'), cleanup: invoke(REFERENCE, 'DEL', dataDir, 'ref-held') });
    const samples = rounds.map(() => [] as number[]);
    for (let i = 0; i < runs + 3; i++) {
      rounds.forEach((r, j) => {
        const ms = timeOnce(r.timed);
        if (r.cleanup) timeOnce(r.cleanup);
        if (i >= 3) samples[j]?.push(ms);
      });
      await Promise.resolve(); // let the runner's loop breathe between rounds
    }
    const [base = NaN, version = NaN, empty = NaN, held = NaN, ref] = samples.map(median);
    const heldP90 = quantile(samples[3] ?? [], 0.9);
    const rows: BenchResult[] = [
      { name: 'node -e 0', value: round(base), unit: 'ms' },
      { name: 'host-local VERSION (start-up)', value: round(version), unit: 'ms', baseline: 'node -e 0', ratio: round(version / base) },
      { name: 'host-local ADD, none held', value: round(empty), unit: 'ms', baseline: 'node -e 0', ratio: round(empty / base) },
      {
        name: `host-local ADD, ${HELD} held`,
        value: round(held),
        unit: 'ms',
        baseline: 'host-local ADD, none held',
        ratio: round(held / empty),
        target: '<= 1.15',
        ok: held / empty <= 1.15,
      },
      { name: `host-local ADD, ${HELD} held (p90)`, value: round(heldP90), unit: 'ms', baseline: 'node -e 0', ratio: round(heldP90 / base) },
    ];
    if (ref !== undefined) {
      rows.push({ name: `reference host-local ADD, ${HELD} held (Go)`, value: round(ref), unit: 'ms', baseline: 'node -e 0', ratio: round(ref / base) });
    }
    return rows;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

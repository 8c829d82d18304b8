// Shared benchmark helpers: timing of whole commands, statistics, and the BenchResult row type.
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inNetns } from '../../testkit/netns.ts';

/** One figure of a benchmark; ratio is value / baseline value measured in the same run. */
export interface BenchResult {
  name: string;
  value: number;
  unit: string;
  baseline?: string;
  ratio?: number;
  target?: string;
  ok?: boolean;
}

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DIST = join(ROOT, 'dist', 'bin');

/** Path of a built executable; throws a clear message when `npm run build` has not run. */
export function distBin(name: string): string {
  const p = join(DIST, name);
  if (!existsSync(p)) throw new Error(`${p} is missing: run npm run build first`);
  return p;
}

export interface Command {
  cmd: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  input?: string;
  /** Checked after every run so a failing command is never timed as a fast one. */
  expectStatus?: number;
}

/** A Command that runs `argv` inside namespace `ns` (entered as testkit/netns.ts enters one). */
export function nsCommand(ns: string, argv: readonly string[], extra: Omit<Command, 'cmd' | 'args'> = {}): Command {
  const [cmd = 'ip', ...args] = inNetns(ns, argv);
  return { cmd, args, ...extra };
}

/** Runs `argv` inside namespace `ns` to completion (setup and checks, not timing); stdout. */
export function nsExecSync(ns: string, argv: readonly string[]): string {
  const [cmd = 'ip', ...args] = inNetns(ns, argv);
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`[${ns}] ${argv.join(' ')} exited ${String(r.status)}: ${r.stderr}`);
  return r.stdout;
}

/** Runs a command once and returns its wall time in milliseconds. */
export function timeOnce(c: Command): number {
  return measureOnce(c).wallMs;
}

/** The preload that makes node processes report their CPU time at exit (see cpu-report.cjs). */
export const CPU_REPORT = join(ROOT, 'scripts', 'bench', 'cpu-report.cjs');

/** `c` with NODE_OPTIONS preloading CPU_REPORT: every node process it starts reports its CPU time. */
export function withCpuReport(c: Command): Command {
  const env = { ...(c.env ?? process.env) };
  env['NODE_OPTIONS'] = `${env['NODE_OPTIONS'] ?? ''} --require ${CPU_REPORT}`.trim();
  return { ...c, env };
}

/**
 * Runs a command once: wall time, and the CPU time (ms, user + system) that node processes preloaded
 * with CPU_REPORT wrote to stderr (summed; NaN when none reported, e.g. a Go binary). A timer, not a
 * collector: spawnSync keeps the measuring process idle while the child runs, so no promise or
 * stream work of ours (testkit/exec.ts's execa) lands in the wall time being measured.
 */
export function measureOnce(c: Command): { wallMs: number; cpuMs: number } {
  const opts: SpawnSyncOptions = { env: c.env ?? process.env, input: c.input ?? '', stdio: ['pipe', 'pipe', 'pipe'] };
  const t0 = process.hrtime.bigint();
  const r = spawnSync(c.cmd, c.args, opts);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const want = c.expectStatus ?? 0;
  if (r.status !== want) {
    throw new Error(`${c.cmd} ${c.args.join(' ')} exited ${String(r.status)} (want ${want}): ${String(r.stdout)} ${String(r.stderr)}`);
  }
  const reports = [...String(r.stderr).matchAll(/weft-bench-cpu-us (\d+)/g)].map((m) => Number(m[1]));
  return { wallMs: ms, cpuMs: reports.length === 0 ? NaN : reports.reduce((a, b) => a + b, 0) / 1000 };
}

/** The 1-minute load average, so a result table shows how busy the machine was. */
export function loadAverage(): number {
  return round(Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]));
}

/**
 * Times several commands interleaved (a, b, c, a, b, c, ...) so that drift in machine load hits
 * them all alike; returns the samples of each, after `warmup` untimed rounds.
 */
export function timeInterleaved(commands: Command[], runs: number, warmup = 3): number[][] {
  const samples = commands.map(() => [] as number[]);
  for (let i = 0; i < warmup + runs; i++) {
    commands.forEach((c, j) => {
      const ms = timeOnce(c);
      if (i >= warmup) samples[j]?.push(ms);
    });
  }
  return samples;
}

/** Median of the samples. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] ?? NaN) : ((s[m - 1] ?? NaN) + (s[m] ?? NaN)) / 2;
}

/** The q-quantile (0..1) of the samples, nearest rank. */
export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
}

/**
 * The `node -e 0` baseline command: Node's own start-up, the floor of every plugin call. It gets
 * the same minimal environment as the plugins: variables such as NODE_EXTRA_CA_CERTS make Node's
 * start-up 100 ms slower on some machines and would flatter every ratio.
 */
export const NODE_BASELINE: Command = { cmd: 'node', args: ['-e', '0'], env: { PATH: process.env.PATH } };

/** Rounds for display. */
export function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

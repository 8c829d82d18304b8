// Harness for host-local end-to-end tests: run our binary (dist/bin/host-local when built, else the
// tsx entry point) or the reference (/usr/lib/cni/host-local) as a runtime would, and inspect the
// data dir. Everything works on temporary data dirs; nothing touches /var/lib/cni.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run as exec } from '../../../testkit/exec.ts';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const REFERENCE = '/usr/lib/cni/host-local';
const BUILT = join(ROOT, 'dist', 'bin', 'host-local');

/** How to start a plugin: executable and leading arguments. */
export interface Bin {
  readonly label: string;
  readonly cmd: string;
  readonly args: readonly string[];
}

/** Our host-local: the bundle when `npm run build` produced it, else the TypeScript entry via tsx. */
export function ourBin(): Bin {
  if (existsSync(BUILT)) return { label: 'weft', cmd: BUILT, args: [] };
  return { label: 'weft(tsx)', cmd: process.execPath, args: ['--import', 'tsx', join(ROOT, 'ipam', 'host-local', 'main.ts')] };
}

/** The reference Go binary from the Debian package containernetworking-plugins. */
export const referenceBin: Bin = { label: 'reference', cmd: REFERENCE, args: [] };

/** One invocation's outcome. `json` is the parsed stdout (null when empty). */
export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  json: Record<string, unknown> | null;
}

/** CNI_* values of one invocation. */
export interface Invocation {
  command: 'ADD' | 'DEL' | 'CHECK' | 'STATUS' | 'GC' | 'VERSION';
  containerId?: string;
  ifname?: string;
  args?: string;
  netns?: string;
  /** Kill the child with SIGKILL after this many ms (or when `killWhen` fires). */
  killAfterMs?: number;
  /** Polled every event-loop turn with the child pid; SIGKILL when it returns true. */
  killWhen?: (pid: number) => boolean;
}

/** Runs one plugin invocation with `conf` on stdin. */
export async function run(bin: Bin, inv: Invocation, conf: unknown): Promise<RunResult> {
  const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'], CNI_COMMAND: inv.command, CNI_PATH: '/usr/lib/cni' };
  if (inv.containerId !== undefined) env['CNI_CONTAINERID'] = inv.containerId;
  if (inv.command === 'ADD' || inv.command === 'CHECK' || inv.command === 'DEL') env['CNI_IFNAME'] = inv.ifname ?? 'eth0';
  if (inv.command === 'ADD' || inv.command === 'CHECK') env['CNI_NETNS'] = inv.netns ?? '/var/run/netns/weft-none';
  if (inv.args !== undefined) env['CNI_ARGS'] = inv.args;
  const r = await exec([bin.cmd, ...bin.args], {
    env, cwd: ROOT, input: JSON.stringify(conf),
    ...(inv.killAfterMs !== undefined ? { killAfterMs: inv.killAfterMs } : {}),
    ...(inv.killWhen !== undefined ? { killWhen: inv.killWhen } : {}),
  });
  return { code: r.signal === null ? r.code : null, signal: r.signal, stdout: r.stdout, stderr: r.stderr, json: parseJsonOrNull(r.stdout) };
}

function parseJsonOrNull(s: string): Record<string, unknown> | null {
  try {
    return s.trim() ? (JSON.parse(s) as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Runs `tasks` with at most `limit` in flight; results in task order. */
export async function pool<T>(limit: number, tasks: ReadonlyArray<() => Promise<T>>): Promise<T[]> {
  const out: T[] = new Array<T>(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const i = next++;
      const task = tasks[i];
      if (task) out[i] = await task();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return out;
}

/** A fresh temporary data dir; remove it with rmSync(dir, { recursive: true }). */
export function tempDataDir(tag: string): string {
  return mkdtempSync(join(tmpdir(), `weft-hl-${tag}-`));
}

/** Removes a temporary data dir (ignores a missing one). */
export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** File name -> content of <dataDir>/<network> (empty object when the directory does not exist). */
export function snapshot(dataDir: string, network: string): Record<string, string> {
  const dir = join(dataDir, network);
  if (!existsSync(dir)) return {};
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) out[name] = readFileSync(join(dir, name), 'latin1');
  return out;
}

/** A host-local network config (the calling plugin's shape) with `ipam` merged in. */
export function netConf(name: string, dataDir: string, ipam: Record<string, unknown>, extra: Record<string, unknown> = {}, cniVersion = '1.0.0'): Record<string, unknown> {
  return { cniVersion, name, type: 'bridge', ...extra, ipam: { type: 'host-local', dataDir, ...ipam } };
}

/** The `ips[].address` values of an ADD result. */
export function addresses(r: RunResult): string[] {
  const ips = (r.json?.['ips'] ?? []) as Array<{ address: string }>;
  return ips.map((i) => i.address);
}

// Test-runner side of the fuzz worker: starts test/fuzz/worker.ts inside a node namespace (never in
// the runner's own), sends cases one at a time and collects replies; also runs a case through a built
// binary under `ip netns exec` for the stdout-discipline sample.
import { type ChildProcess } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPLY_MARK, type WorkerReply } from './protocol.ts';
import type { FuzzCase } from './cases.ts';
import { inNetns, run, spawnInNetns } from '../../testkit/netns.ts';

/** The repository root. */
export const ROOT = join(import.meta.dirname, '..', '..');
/** Built plugin bundles: a private copy of dist/bin (see private-bin.ts), CNI_PATH of every case. */
export { privateBinDir } from './private-bin.ts';
const TSX_LOADER = join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs');

/** The output of one case, from the worker or a binary, with stray stdout lines (must be none). */
export interface CaseOutput {
  stdout: string;
  exitCode: number;
  ms: number;
  stray: string[];
  threw?: string;
  stderr: string;
}

/** dev:ino of this thread's network namespace (passed to the worker so it can refuse to share it). */
export function ownNetnsId(): string {
  const st = statSync('/proc/thread-self/ns/net');
  return `${st.dev}:${st.ino}`;
}

/** A running worker in node namespace `node`. */
export class FuzzWorker {
  private readonly waiting: Array<(r: WorkerReply) => void> = [];
  private stray: string[] = [];
  private stderr = '';
  private exited: string | undefined;

  private constructor(private readonly child: ChildProcess) {
    const rl = createInterface({ input: child.stdout as NodeJS.ReadableStream, crlfDelay: Infinity });
    rl.on('line', (line) => {
      if (!line.startsWith(REPLY_MARK)) {
        this.stray.push(line);
        return;
      }
      const reply = JSON.parse(line.slice(REPLY_MARK.length)) as WorkerReply;
      this.waiting.shift()?.(reply);
    });
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      this.stderr = (this.stderr + d).slice(-20_000);
    });
    child.on('exit', (code, sig) => {
      this.exited = `worker exited (${code ?? sig}); stderr: ${this.stderr.slice(-2000)}`;
      for (const w of this.waiting.splice(0)) w({ id: '?', stdout: '', stderr: '', exitCode: -1, ms: 0, threw: this.exited });
    });
  }

  /** Starts a worker for `plugins` inside namespace `node`, with `cwd` as its working directory. */
  static async start(node: string, plugins: readonly string[], cwd: string, extraEnv: Record<string, string> = {}): Promise<FuzzWorker> {
    const child = spawnInNetns(node, [process.execPath, '--import', TSX_LOADER, join(ROOT, 'test', 'fuzz', 'worker.ts')], {
      cwd,
      env: { PATH: process.env['PATH'], WEFT_FUZZ_RUNNER_NETNS: ownNetnsId(), FUZZ_PLUGINS: plugins.join(','), ...extraEnv },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const w = new FuzzWorker(child);
    const ready = await w.next();
    if (ready.id !== 'ready') throw new Error(`fuzz worker did not start: ${ready.threw ?? JSON.stringify(ready)}`);
    return w;
  }

  private next(): Promise<WorkerReply> {
    if (this.exited !== undefined) return Promise.resolve({ id: '?', stdout: '', stderr: '', exitCode: -1, ms: 0, threw: this.exited });
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Runs one case in the worker. */
  async run(c: FuzzCase): Promise<CaseOutput> {
    this.stray = [];
    const reply = this.next();
    this.child.stdin?.write(`${JSON.stringify({ id: c.id, plugin: c.target, env: c.env, stdin: c.stdin.toString('base64') })}\n`);
    const r = await reply;
    const out: CaseOutput = { stdout: r.stdout, exitCode: r.exitCode, ms: r.ms, stray: this.stray, stderr: r.stderr };
    if (r.threw !== undefined) out.threw = r.threw;
    return out;
  }

  /** Stops the worker (closes its stdin, then kills it if it lingers). */
  async close(): Promise<void> {
    if (this.exited !== undefined) return;
    const done = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin?.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await done;
    clearTimeout(timer);
  }
}

/** Runs case `c` through the built binary <binDir>/<target> inside namespace `node`. */
export async function runBinary(node: string, c: FuzzCase, cwd: string, binDir: string): Promise<CaseOutput> {
  const r = await run(inNetns(node, [join(binDir, c.target)]), { cwd, env: { PATH: process.env['PATH'], ...c.env }, input: c.stdin });
  return { stdout: r.stdout, exitCode: r.signal === null ? r.code : 128, ms: r.ms, stray: [], stderr: r.stderr.slice(-4000) };
}

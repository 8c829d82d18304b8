// The test kit's one spawn-and-collect helper (tests, demo and bench; never a plugin's ADD path nor
// weftd: see docs/architecture.md, "execa kept off the ADD path"): runs a command without a shell
// through execa, feeds stdin, collects stdout and stderr, and reports the exit instead of throwing.
import { execa } from 'execa';
import { constants } from 'node:os';

/** Outcome of a command; a non-zero exit is reported, not thrown. */
export interface ExecResult {
  /** Exit status; killed by a signal: 128 + its number (SIGKILL -> 137); timed out: 124, as timeout(1). */
  code: number;
  stdout: string;
  stderr: string;
  /** The signal that ended it (e.g. 'SIGKILL' after `killAfterMs`), or null when it exited. */
  signal: NodeJS.Signals | null;
  /** Wall time from spawn to exit, in milliseconds. */
  ms: number;
}

/** How to run a command; every field optional. */
export interface ExecOptions {
  /** Written to stdin, then closed (default: empty stdin). */
  input?: string | Uint8Array;
  /** The whole environment of the child (process.env is not merged in); default: process.env. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** false: leave stdin open (for commands that would stop at end of input); ignored when `input` is set. Default true. */
  closeStdin?: boolean;
  /** Killed with SIGKILL after this many milliseconds (code 124, a note on stderr). Default: no limit. */
  timeoutMs?: number;
  /** Sent SIGKILL this many milliseconds after spawn, reported as killed (code 137, `signal`), not as a timeout. */
  killAfterMs?: number;
  /** Polled with the child's pid every event-loop turn until it exits; SIGKILL when it returns true (e.g. once it holds a lock). */
  killWhen?: (pid: number) => boolean;
}

/** Runs `cmd` (argv, no shell) to completion; rejects only when it cannot be started. */
export async function run(cmd: readonly string[], opts: ExecOptions | string = {}): Promise<ExecResult> {
  const o: ExecOptions = typeof opts === 'string' ? { input: opts } : opts;
  const [file, ...args] = cmd;
  if (file === undefined) throw new Error('run: empty command');
  const child = execa(file, args, {
    reject: false,
    stripFinalNewline: false,
    ...(o.env !== undefined ? { env: o.env, extendEnv: false } : {}),
    ...(o.cwd !== undefined ? { cwd: o.cwd } : {}),
    ...(o.input !== undefined ? { input: o.input } : o.closeStdin === false ? {} : { input: '' }),
    ...(o.timeoutMs !== undefined ? { timeout: o.timeoutMs } : {}),
    killSignal: 'SIGKILL',
    maxBuffer: 256 * 1024 * 1024,
  });
  const killer = o.killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), o.killAfterMs);
  let done = false;
  const { killWhen } = o;
  const pid = child.pid;
  if (killWhen !== undefined && pid !== undefined) {
    const poll = (): void => {
      if (done) return;
      if (killWhen(pid)) child.kill('SIGKILL');
      else setImmediate(poll);
    };
    setImmediate(poll);
  }
  const r = await child;
  done = true;
  clearTimeout(killer);
  const stdout = typeof r.stdout === 'string' ? r.stdout : '';
  const stderr = typeof r.stderr === 'string' ? r.stderr : '';
  const signal = (r.signal ?? null) as NodeJS.Signals | null;
  if (r.timedOut) return { code: 124, stdout, stderr: `${stderr}\n(timed out after ${o.timeoutMs} ms)`, signal, ms: r.durationMs };
  if (r.exitCode === undefined && signal === null) throw (r.cause instanceof Error ? r.cause : r);
  const code = r.exitCode ?? 128 + (signal !== null ? (constants.signals[signal] ?? 0) : 0);
  return { code, stdout, stderr, signal, ms: r.durationMs };
}

/** Like run(), but throws (naming the command, its exit and stderr) unless it exits 0; resolves with stdout. */
export async function runOk(cmd: readonly string[], opts: ExecOptions | string = {}): Promise<string> {
  const r = await run(cmd, opts);
  if (r.code !== 0) throw new Error(`${cmd.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
  return r.stdout;
}

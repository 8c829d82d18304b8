// The test kit's one spawn-and-collect helper (tests, demo and bench; never a plugin's ADD path): runs
// a command without a shell, feeds stdin, collects stdout and stderr, and reports the exit instead
// of throwing on it. Built on node:child_process: execa would add a dependency for what fits here.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';

/** Outcome of a command; a non-zero exit is reported, not thrown. */
export interface ExecResult {
  /** Exit status; killed by a signal: 128 + its number (SIGKILL -> 137); timed out: 124, as timeout(1). */
  code: number;
  stdout: string;
  stderr: string;
}

/** How to run a command; every field optional. */
export interface ExecOptions {
  /** Written to stdin, then closed (default: empty stdin). */
  input?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** false: leave stdin open (for commands that would stop at end of input); ignored when `input` is set. Default true. */
  closeStdin?: boolean;
  /** Killed with SIGKILL after this many milliseconds (code 124, a note on stderr). Default: no limit. */
  timeoutMs?: number;
}

/** Runs `cmd` (argv, no shell) to completion; rejects only when it cannot be started. */
export function run(cmd: readonly string[], opts: ExecOptions | string = {}): Promise<ExecResult> {
  const o: ExecOptions = typeof opts === 'string' ? { input: opts } : opts;
  const [file, ...args] = cmd;
  if (file === undefined) return Promise.reject(new Error('run: empty command'));
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'], ...(o.env ? { env: o.env } : {}), ...(o.cwd !== undefined ? { cwd: o.cwd } : {}) });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = o.timeoutMs === undefined ? undefined : setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, o.timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) resolve({ code: 124, stdout, stderr: `${stderr}\n(timed out after ${o.timeoutMs} ms)` });
      else resolve({ stdout, stderr, code: code ?? 128 + (signal !== null ? (constants.signals[signal] ?? 0) : 0) });
    });
    // A child that exits without reading stdin (ip netns add) makes the write fail with EPIPE: ignore it.
    child.stdin.on('error', () => undefined);
    if (o.input !== undefined || o.closeStdin !== false) child.stdin.end(o.input ?? '');
  });
}

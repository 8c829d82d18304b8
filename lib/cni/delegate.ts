// IPAM (and other) delegation per the spec: run the plugin named `type` from CNI_PATH with the same
// env (only CNI_COMMAND changed) and the same stdin bytes. A weft plugin whose handler is registered
// (our bundle of the same version, or the standalone executable we are running) runs in-process:
// with the caller's decoded config when it has one (runDecoded: stdin parsed once, the Result handed
// over as an object), else through runPlugin on the same bytes.
import { CniError, ErrorCode, decodeFailure, ioFailure } from './errors.ts';
import { findInPath, isOwnStandaloneFile, readBundleHeader } from './find-plugin.ts';
import { log } from './log.ts';
import { traceStep } from '../trace/steps.ts';
import { parseResult } from './result-parse.ts';
import { runDecoded, runPlugin, validateDecoded, type DecodedConfig } from './skel.ts';
import type { Env, Plugin, PluginOutput } from './plugin.ts';
import type { Command, Result } from './types.ts';

/** Commands that can be delegated (VERSION is not a delegation). */
export type DelegateCommand = Exclude<Command, 'VERSION'>;

const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
const inProcess = new Map<string, Plugin>();

/** Make `plugin` runnable in-process when a bundle named `name` (with the same version) is found on CNI_PATH. */
export function registerInProcess(name: string, plugin: Plugin): void {
  inProcess.set(name, plugin);
}

/** Undo registerInProcess (tests, or a plugin that must always be exec'd). */
export function unregisterInProcess(name: string): void {
  inProcess.delete(name);
}

function preview(s: string): string {
  return JSON.stringify(s.length > 200 ? `${s.slice(0, 200)}...` : s);
}

/** Turn a delegate's stdout and exit status into a result (ADD), nothing, or its own CniError. */
function interpretOutput(type: string, command: DelegateCommand, out: PluginOutput | { stdout: string; exitCode: number }): Result | undefined {
  const text = out.stdout.trim();
  if (out.exitCode !== 0) {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      doc = undefined;
    }
    const e = doc as { code?: unknown; msg?: unknown; details?: unknown } | undefined;
    if (e && typeof e.code === 'number' && typeof e.msg === 'string') {
      throw new CniError(e.code, e.msg, typeof e.details === 'string' ? e.details : '');
    }
    throw new CniError(ErrorCode.unexpected, `delegate ${type} ${command} failed`, `exit status ${out.exitCode}, stdout ${preview(text)}`);
  }
  if (command !== 'ADD') return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw decodeFailure(`cannot decode the result of delegate ${type}`, `${(err as Error).message}; stdout ${preview(text)}`);
  }
  return parseResult(doc, undefined, `${type} result`);
}

function spawnEnv(env: Env, command: DelegateCommand): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  out['CNI_COMMAND'] = command;
  return out;
}

/** Exec `file` with the CNI contract; resolves with its stdout and exit status (stderr passes through). */
async function execPlugin(file: string, command: DelegateCommand, stdinData: Buffer, env: Env): Promise<{ stdout: string; exitCode: number }> {
  // Loaded on the (rare) exec path only: keeps child_process out of every plugin's start-up.
  const { spawn } = process.getBuiltinModule('node:child_process');
  return new Promise((resolve, reject) => {
    const child = spawn(file, [], { env: spawnEnv(env, command), stdio: ['pipe', 'pipe', 'inherit'] });
    const chunks: Buffer[] = [];
    let size = 0;
    child.on('error', (e) => reject(ioFailure(`failed to run ${file}`, e.message, e)));
    child.stdout.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_OUTPUT_BYTES) child.kill('SIGKILL');
      else chunks.push(c);
    });
    // EPIPE when the child exits without reading stdin is harmless: its output decides.
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdinData);
    child.on('close', (code, signal) => {
      if (size > MAX_OUTPUT_BYTES) reject(ioFailure(`delegate ${file} printed more than ${MAX_OUTPUT_BYTES} bytes`));
      else if (signal) reject(new CniError(ErrorCode.unexpected, `delegate ${file} killed by ${signal}`));
      else resolve({ stdout: Buffer.concat(chunks).toString('utf8'), exitCode: code ?? 1 });
    });
  });
}

/** The registered plugin that may stand in for `file` (found on CNI_PATH as `type`), if any. */
function inProcessPlugin(type: string, file: string): Plugin | undefined {
  // The standalone executable under another name (asked first: two stats, and the standalone file
  // has no bundle header to read): the same file is the same build.
  if (isOwnStandaloneFile(file)) return inProcess.get(type);
  const header = readBundleHeader(file);
  if (header === undefined) return undefined;
  const plugin = inProcess.get(header.name);
  return plugin?.version === header.version ? plugin : undefined;
}

/** Where `type` is on CNI_PATH and the registered plugin that stands in for it, if any. */
interface Resolved {
  file: string;
  plugin: Plugin | undefined;
}

// One invocation's lookups, by its env object: the ADD checks (delegateValidateAdd) and the ADD that
// follows (or its rollback's DEL) find the same file, so its stats are made once per invocation.
const resolvedByEnv = new WeakMap<Env, Map<string, Resolved>>();

function resolveDelegate(type: string, env: Env): Resolved {
  let byType = resolvedByEnv.get(env);
  const hit = byType?.get(type);
  if (hit !== undefined && inProcess.get(type) === hit.plugin) return hit;
  const file = findInPath(type, (env['CNI_PATH'] ?? '').split(':').filter((d) => d !== ''));
  const out = { file, plugin: inProcessPlugin(type, file) };
  if (byType === undefined) resolvedByEnv.set(env, (byType = new Map()));
  byType.set(type, out);
  return out;
}

/**
 * Run plugin `type` from env.CNI_PATH for `command` with `stdinData` (normally the caller's own stdin
 * bytes) and `env` (normally the caller's). `decoded`, when given, is what the caller decoded from
 * those same bytes; an in-process delegate then starts from it. Returns the result for ADD,
 * undefined otherwise; a failure of the delegate is rethrown as its own CniError (code and msg
 * preserved). A missing plugin is code 100 (ErrorCode.pluginNotFound): the caller decides whether
 * DEL tolerates it.
 */
export async function delegate(type: string, command: DelegateCommand, stdinData: Buffer, env: Env, decoded?: DecodedConfig): Promise<Result | undefined> {
  const { file, plugin } = resolveDelegate(type, env);
  if (plugin !== undefined) {
    log.debug('delegating in-process', { type, command, file });
    const delegateEnv = { ...env, CNI_COMMAND: command };
    if (decoded !== undefined) return runDecoded(plugin, command, delegateEnv, stdinData, decoded);
    return interpretOutput(type, command, await runPlugin(plugin, { env: delegateEnv, stdin: stdinData }));
  }
  log.debug('delegating by exec', { type, command, file });
  return interpretOutput(type, command, await execPlugin(file, command, stdinData, env));
}

/**
 * The checks delegate ADD would make before changing anything, without running it: the plugin must be
 * on CNI_PATH (code 100 otherwise), and an in-process one runs its validateAdd on `decoded`. A delegate
 * that would be exec'd is only checked by running it; the caller's rollback covers that case.
 */
export async function delegateValidateAdd(type: string, stdinData: Buffer, env: Env, decoded: DecodedConfig): Promise<void> {
  const { plugin } = resolveDelegate(type, env);
  if (plugin !== undefined) await validateDecoded(plugin, { ...env, CNI_COMMAND: 'ADD' }, stdinData, decoded);
  traceStep(`delegate ${type}: validated`);
}

/** Delegate ADD; resolves with the delegate's result in internal form. */
export async function delegateAdd(type: string, stdinData: Buffer, env: Env, decoded?: DecodedConfig): Promise<Result> {
  const r = await delegate(type, 'ADD', stdinData, env, decoded);
  traceStep(`delegate ${type}: ADD`);
  if (!r) throw decodeFailure(`delegate ${type} returned no result`);
  return r;
}

/** Delegate DEL (a missing plugin throws code 100; tolerate it with isPluginNotFound if desired). */
export async function delegateDel(type: string, stdinData: Buffer, env: Env, decoded?: DecodedConfig): Promise<void> {
  await delegate(type, 'DEL', stdinData, env, decoded);
}

/** Delegate CHECK. */
export async function delegateCheck(type: string, stdinData: Buffer, env: Env, decoded?: DecodedConfig): Promise<void> {
  await delegate(type, 'CHECK', stdinData, env, decoded);
}

/** Delegate GC (1.1.0): stdin carries cni.dev/valid-attachments unchanged. */
export async function delegateGc(type: string, stdinData: Buffer, env: Env): Promise<void> {
  await delegate(type, 'GC', stdinData, env);
}

/** Delegate STATUS (1.1.0). */
export async function delegateStatus(type: string, stdinData: Buffer, env: Env): Promise<void> {
  await delegate(type, 'STATUS', stdinData, env);
}

/** True when `e` is the "delegate not found on CNI_PATH" error. */
export function isPluginNotFound(e: unknown): boolean {
  return e instanceof CniError && e.code === ErrorCode.pluginNotFound;
}

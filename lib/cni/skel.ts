// The plugin skeleton: decodes one CNI invocation (env + stdin), dispatches to the plugin's handler and
// renders exactly one JSON document for stdout. runPlugin is pure (used for in-process delegation too);
// pluginMain wires it to the process.
import { writeSync } from 'node:fs';
import { checkNotOwnNetns, isCommand, readCmdEnv } from './cmd-env.ts';
import { CniError, decodeFailure, incompatibleVersion, invalidConfig, invalidEnv, ioFailure, toCniError } from './errors.ts';
import { normalizeKeys } from './decode.ts';
import type { FieldTree } from './decode.ts';
import { configureLog, log } from './log.ts';
import { traceStep } from '../trace/steps.ts';
import { MAX_STDIN_BYTES, readStdinSync } from './stdin.ts';
import { CURRENT_VERSION, SUPPORTED_VERSIONS } from './types.ts';
import { formatResult, isSupportedVersion, parseResult, versionAtLeast } from './version.ts';
import type { CmdArgs, Env, Plugin, PluginIo, PluginOutput } from './plugin.ts';
import type { Command, NetConf, Result } from './types.ts';

export type { CmdArgs, Plugin, PluginIo, PluginOutput } from './plugin.ts';

/** Input of runPlugin: the environment and stdin (bytes, or a reader called only when needed). */
export interface RunInput {
  env: Env;
  stdin: Buffer | (() => Buffer);
}

/** Serialise a document as the reference does (indented), newline-terminated. */
function render(doc: unknown): string {
  return `${JSON.stringify(doc, null, 4)}\n`;
}

/** The stderr text for a bare invocation (no CNI_COMMAND): name, version, supported CNI versions. */
export function aboutText(plugin: Plugin): string {
  const head = plugin.about ?? `${plugin.name} ${plugin.version}`;
  return `${head}\nCNI protocol versions supported: ${plugin.supportedVersions.join(', ')}\n`;
}

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch (e) {
    throw decodeFailure('error decoding network configuration', (e as Error).message);
  }
}

/** The keys the skeleton itself reads, matched as the reference's Go structs match them (decode.ts). */
const SKEL_FIELDS: FieldTree = { p: { cniVersion: {}, name: {}, type: {}, prevResult: {} } };

/** The cniVersion a config document declares ('' and absent mean 0.1.0, as in the reference). */
function declaredVersion(doc: unknown): unknown {
  const v = (normalizeKeys(doc, SKEL_FIELDS) as { cniVersion?: unknown } | null)?.cniVersion;
  return v === undefined || v === '' ? '0.1.0' : v;
}

/** The cniVersion to label errors with: the config's if it is one we speak, else the newest. */
function errorVersion(bytes: Buffer | undefined): string {
  if (!bytes || bytes.length === 0 || bytes.length > MAX_STDIN_BYTES) return CURRENT_VERSION;
  try {
    const v = declaredVersion(JSON.parse(bytes.toString('utf8')));
    return isSupportedVersion(v) ? v : CURRENT_VERSION;
  } catch {
    return CURRENT_VERSION;
  }
}

function versionCommand(plugin: Plugin, bytes: Buffer): PluginOutput {
  const cniVersion = errorVersion(bytes);
  return { stdout: render({ cniVersion, supportedVersions: [...plugin.supportedVersions] }), stderr: '', exitCode: 0 };
}

/**
 * The version `command` runs under for a config of `cniVersion`, after its rules: one `plugin` speaks
 * (DEL never blocks cleanup: a version we do not speak still releases, under the newest we do);
 * CHECK from 0.4.0, GC and STATUS from 1.1.0.
 */
function effectiveVersion(plugin: Plugin, command: Command, cniVersion: string): string {
  if (command === 'DEL' && !isSupportedVersion(cniVersion, plugin.supportedVersions)) return CURRENT_VERSION;
  if (!isSupportedVersion(cniVersion, plugin.supportedVersions)) {
    throw incompatibleVersion(
      'incompatible CNI versions',
      `config is ${JSON.stringify(cniVersion)}, plugin supports [${plugin.supportedVersions.join(' ')}]`,
    );
  }
  if (command === 'CHECK' && !versionAtLeast(cniVersion, '0.4.0')) {
    throw incompatibleVersion('config version does not allow CHECK', `cniVersion ${cniVersion} < 0.4.0`);
  }
  if ((command === 'GC' || command === 'STATUS') && !versionAtLeast(cniVersion, '1.1.0')) {
    throw incompatibleVersion(`config version does not allow ${command}`, `cniVersion ${cniVersion} < 1.1.0`);
  }
  return cniVersion;
}

/** Decode stdin into the config and its cniVersion, enforcing the version rules of `command`. */
function decodeConfig(plugin: Plugin, command: Command, bytes: Buffer): { config: NetConf; cniVersion: string } {
  if (bytes.length > MAX_STDIN_BYTES) {
    throw invalidConfig('network configuration too large', `more than ${MAX_STDIN_BYTES} bytes on stdin`);
  }
  // Not JSON, or JSON but not an object: the one refusal DEL keeps (it names no network to clean up).
  const doc = parseJson(bytes);
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw decodeFailure('error decoding network configuration', 'stdin must hold a JSON object');
  }
  const config = normalizeKeys(doc, SKEL_FIELDS) as NetConf;
  const raw = command === 'DEL' && typeof config.cniVersion !== 'string' ? undefined : (config.cniVersion as unknown);
  if (raw !== undefined && typeof raw !== 'string') {
    throw decodeFailure('error decoding network configuration', 'cniVersion must be a string');
  }
  // A config without cniVersion, or with "" (libcni's value for a .conf without one), is 0.1.0, as the
  // reference decodes it (pkg/version ConfigDecoder); the config carries it from here on.
  const cniVersion = effectiveVersion(plugin, command, raw === undefined || raw === '' ? '0.1.0' : raw);
  config.cniVersion = cniVersion;
  return { config, cniVersion };
}

/** Runs the handler for a.command: ADD's result in internal form, undefined for the others. */
async function callHandler(plugin: Plugin, a: CmdArgs): Promise<Result | undefined> {
  switch (a.command) {
    case 'ADD': {
      if (!plugin.add) throw invalidEnv(`plugin ${plugin.name} does not implement ADD`);
      const result = await plugin.add(a);
      if (typeof result !== 'object' || result === null) throw new CniError(999, 'plugin returned no result for ADD');
      return result;
    }
    case 'DEL':
    case 'CHECK': {
      const h = a.command === 'DEL' ? plugin.del : plugin.check;
      if (!h) throw invalidEnv(`plugin ${plugin.name} does not implement ${a.command}`);
      await h(a);
      return undefined;
    }
    // No handler: nothing to collect, and a plugin without a STATUS handler is always ready.
    case 'GC':
      await plugin.gc?.(a);
      return undefined;
    case 'STATUS':
      await plugin.status?.(a);
      return undefined;
  }
}

async function dispatch(plugin: Plugin, a: CmdArgs): Promise<string> {
  const result = await callHandler(plugin, a);
  traceStep(`${a.command} returned`);
  return result === undefined ? '' : render(formatResult(result, a.cniVersion));
}

function readInput(stdin: RunInput['stdin']): Buffer {
  if (typeof stdin !== 'function') return stdin;
  try {
    return stdin();
  } catch (e) {
    throw ioFailure('error reading network configuration from stdin', (e as Error).message, e);
  }
}

/**
 * Run one invocation of `plugin` against `env` and `stdin` without touching the process: returns the
 * single stdout document ('' for DEL/CHECK/GC/STATUS success and for the about text), the stderr text
 * and the exit code. Never throws.
 */
export async function runPlugin(plugin: Plugin, input: RunInput): Promise<PluginOutput> {
  const { env } = input;
  const command = env['CNI_COMMAND'] ?? '';
  if (command === '') return { stdout: '', stderr: aboutText(plugin), exitCode: 0 };
  let bytes: Buffer | undefined;
  try {
    if (!isCommand(command)) throw invalidEnv(`unknown CNI_COMMAND: ${JSON.stringify(command.slice(0, 32))}`);
    bytes = readInput(input.stdin);
    traceStep('stdin read');
    if (command === 'VERSION') return versionCommand(plugin, bytes);
    const ce = readCmdEnv(command, env);
    const { config, cniVersion } = decodeConfig(plugin, command, bytes);
    checkNotOwnNetns(ce.netns, env);
    traceStep('config decoded');
    const a: CmdArgs = { command, ...ce, stdinData: bytes, config, cniVersion, env };
    if (config.prevResult !== undefined && config.prevResult !== null) {
      try {
        a.prevResult = parseResult(config.prevResult, cniVersion, 'prevResult');
      } catch (e) {
        // DEL never blocks cleanup: a prevResult it cannot read is one it does not have. Plugins whose
        // reference config has no prevResult field (host-local) ignore it as the reference does.
        if (command !== 'DEL' && plugin.prevResultOptional !== true) throw e;
      }
    }
    return { stdout: await dispatch(plugin, a), stderr: '', exitCode: 0 };
  } catch (e) {
    const err = toCniError(e);
    if (err.code === 999) log.error(`${command} failed unexpectedly`, { plugin: plugin.name, error: err.cause ?? err });
    return { stdout: render(err.toJSON(errorVersion(bytes))), stderr: '', exitCode: 1 };
  }
}

/** What a delegating plugin already decoded from the stdin it hands on (the same bytes). */
export interface DecodedConfig {
  config: NetConf;
  cniVersion: string;
  prevResult?: Result;
}

/**
 * Run `plugin` in this process as the delegate of a plugin that already decoded `stdinData` into
 * `decoded`: the same checks as runPlugin (env, version rules, own netns) without parsing stdin again,
 * and ADD's result handed back as the object the handler made (no JSON text in between). A failure
 * throws the CniError that runPlugin would have printed. The handler may read `decoded.config` but
 * must not change it (the caller keeps using it).
 */
export async function runDecoded(plugin: Plugin, command: Exclude<Command, 'VERSION'>, env: Env, stdinData: Buffer, decoded: DecodedConfig): Promise<Result | undefined> {
  try {
    const ce = readCmdEnv(command, env);
    const cniVersion = effectiveVersion(plugin, command, decoded.cniVersion);
    checkNotOwnNetns(ce.netns, env);
    const a: CmdArgs = { command, ...ce, stdinData, config: decoded.config, cniVersion, env };
    if (decoded.prevResult !== undefined) a.prevResult = decoded.prevResult;
    return await callHandler(plugin, a);
  } catch (e) {
    const err = toCniError(e);
    if (err.code === 999) log.error(`${command} failed unexpectedly`, { plugin: plugin.name, error: err.cause ?? err });
    throw err;
  }
}

/**
 * Run `plugin.validateAdd` in this process on what a delegating plugin decoded (the ADD checks of
 * runDecoded); nothing when the plugin has none. Throws the CniError ADD would have answered.
 */
export async function validateDecoded(plugin: Plugin, env: Env, stdinData: Buffer, decoded: DecodedConfig): Promise<void> {
  if (plugin.validateAdd === undefined) return;
  const ce = readCmdEnv('ADD', env);
  const cniVersion = effectiveVersion(plugin, 'ADD', decoded.cniVersion);
  const a: CmdArgs = { command: 'ADD', ...ce, stdinData, config: decoded.config, cniVersion, env };
  if (decoded.prevResult !== undefined) a.prevResult = decoded.prevResult;
  try {
    await plugin.validateAdd(a);
  } catch (e) {
    throw toCniError(e);
  }
}

function writeAllSync(fd: number, s: string): void {
  const buf = Buffer.from(s, 'utf8');
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off);
}

/** The entry point of a plugin executable: reads the process's env and stdin, prints, exits. */
export async function pluginMain(plugin: Plugin, io: Partial<PluginIo> = {}): Promise<void> {
  traceStep(`${plugin.name} main`);
  const env = io.env ?? process.env;
  configureLog(env, plugin.name);
  const out = await runPlugin(plugin, { env, stdin: io.stdin ?? (() => readStdinSync()) });
  if (out.stderr) (io.stderr ?? ((s: string) => writeAllSync(2, s)))(out.stderr);
  traceStep('handler done');
  if (out.stdout) (io.stdout ?? ((s: string) => writeAllSync(1, s)))(out.stdout);
  traceStep('stdout written');
  (io.exit ?? ((code: number) => process.exit(code)))(out.exitCode);
}

export { SUPPORTED_VERSIONS };

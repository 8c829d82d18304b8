// A libcni-style conflist runner for tests, the demo and benchmarks: runs each plugin of a
// conflist in order with prevResult chaining (ADD), in reverse (DEL), with the cached result
// (CHECK), injecting runtimeConfig for the capabilities a plugin declares, as libcni does.
import { join } from 'node:path';
import { run } from './exec.ts';
import { inNetns } from './netns.ts';

export interface ConfList {
  cniVersion: string;
  name: string;
  plugins: Array<Record<string, unknown> & { type: string; capabilities?: Record<string, boolean> }>;
}

export interface Attachment {
  containerId: string;
  netns: string;
  ifName: string;
  /** Capability values offered by the runtime, e.g. { portMappings: [...] }. */
  runtimeConfig?: Record<string, unknown>;
  /** CNI_ARGS. */
  args?: string;
}

export interface RunnerOptions {
  /** Directories searched for plugins (CNI_PATH). */
  binDirs: string[];
  /** Runs every plugin inside this network namespace (the node), through `ip netns exec`. */
  nodeNetns?: string;
  /** A command prefix for every plugin run, outside `ip netns exec` (e.g. the no-Node.js wrapper of test/e2e/standalone). */
  wrap?: string[];
  /** Extra environment for the plugins (e.g. WEFT_LOG). */
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

/** Outcome of one plugin execution. */
export interface PluginRun {
  code: number | null;
  stdout: string;
  stderr: string;
  json: Record<string, unknown> | undefined;
  ms: number;
}

/** Error raised when a plugin fails: carries the CNI error JSON when the plugin printed one. */
export class PluginFailure extends Error {
  constructor(
    readonly plugin: string,
    readonly command: string,
    readonly run: PluginRun,
  ) {
    super(`${plugin} ${command} failed (exit ${String(run.code)}): ${run.stdout.trim() || run.stderr.trim()}`);
  }
  get cniCode(): number | undefined {
    const c = this.run.json?.['code'];
    return typeof c === 'number' ? c : undefined;
  }
}

/** Executes one plugin binary with CNI env and stdin; never throws on a plugin failure. */
export async function execPlugin(bin: string, env: NodeJS.ProcessEnv, stdin: string, opts: RunnerOptions): Promise<PluginRun> {
  const cmd = [...(opts.wrap ?? []), ...(opts.nodeNetns !== undefined ? inNetns(opts.nodeNetns, [bin]) : [bin])];
  // A plugin past its time is SIGKILLed and reported as killed (code null), as a runtime would see it.
  const r = await run(cmd, { env: { PATH: process.env.PATH, ...opts.env, ...env }, input: stdin, killAfterMs: opts.timeoutMs ?? 30_000 });
  let json: Record<string, unknown> | undefined;
  try {
    json = r.stdout.trim() === '' ? undefined : (JSON.parse(r.stdout) as Record<string, unknown>);
  } catch {
    json = undefined;
  }
  return { code: r.signal === null ? r.code : null, stdout: r.stdout, stderr: r.stderr, json, ms: r.ms };
}

/** Runs conflists the way libcni does, keeping the cached ADD result per attachment. */
export class CniRunner {
  private readonly cache = new Map<string, Record<string, unknown>>();

  constructor(
    readonly conf: ConfList,
    readonly opts: RunnerOptions,
  ) {}

  private key(a: Attachment): string {
    return `${this.conf.name}-${a.containerId}-${a.ifName}`;
  }

  private pluginConf(p: ConfList['plugins'][number], a: Attachment, prevResult: unknown): string {
    const conf: Record<string, unknown> = { ...p, name: this.conf.name, cniVersion: this.conf.cniVersion };
    const rc: Record<string, unknown> = {};
    for (const [cap, on] of Object.entries(p.capabilities ?? {})) {
      if (on && a.runtimeConfig?.[cap] !== undefined) rc[cap] = a.runtimeConfig[cap];
    }
    if (Object.keys(rc).length > 0) conf['runtimeConfig'] = rc;
    if (prevResult !== undefined) conf['prevResult'] = prevResult;
    return JSON.stringify(conf);
  }

  private env(command: string, a: Attachment): NodeJS.ProcessEnv {
    return {
      CNI_COMMAND: command,
      CNI_CONTAINERID: a.containerId,
      CNI_NETNS: a.netns,
      CNI_IFNAME: a.ifName,
      CNI_ARGS: a.args ?? '',
      CNI_PATH: this.opts.binDirs.join(':'),
    };
  }

  private async runOne(p: ConfList['plugins'][number], command: string, a: Attachment, prev: unknown): Promise<PluginRun> {
    const bin = join(this.opts.binDirs[0] ?? '', p.type);
    const run = await execPlugin(bin, this.env(command, a), this.pluginConf(p, a, prev), this.opts);
    if (run.code !== 0) throw new PluginFailure(p.type, command, run);
    return run;
  }

  /** ADD through every plugin; on failure, DEL what was added (as libcni does) and rethrow. */
  async add(a: Attachment): Promise<Record<string, unknown>> {
    let prev: Record<string, unknown> | undefined;
    for (const p of this.conf.plugins) {
      try {
        const run = await this.runOne(p, 'ADD', a, prev);
        prev = run.json;
      } catch (e) {
        await this.del(a).catch(() => undefined);
        throw e;
      }
    }
    if (prev === undefined) throw new Error('conflist produced no result');
    this.cache.set(this.key(a), prev);
    return prev;
  }

  /** CHECK every plugin with the cached result. */
  async check(a: Attachment): Promise<void> {
    const prev = this.cache.get(this.key(a));
    for (const p of this.conf.plugins) await this.runOne(p, 'CHECK', a, prev);
  }

  /** DEL in reverse order with the cached result (when there is one); drops the cache entry. */
  async del(a: Attachment): Promise<void> {
    const prev = this.cache.get(this.key(a));
    for (const p of [...this.conf.plugins].reverse()) await this.runOne(p, 'DEL', a, prev);
    this.cache.delete(this.key(a));
  }

  /** Takes over an ADD result cached by another runner (a runtime upgraded in place keeps its result cache). */
  adopt(a: Attachment, result: Record<string, unknown>): void {
    this.cache.set(this.key(a), result);
  }

  /** The cached ADD result of an attachment. */
  cached(a: Attachment): Record<string, unknown> | undefined {
    return this.cache.get(this.key(a));
  }
}

// Fuzz cases: schema mutations of a valid config, bad CNI_* env, and hand-written stdin attacks
// (truncated JSON, 10 MB, deep nesting, BOM, invalid UTF-8, version games). Each case carries what
// a correct plugin must answer; case i of seed s is always the same case (prng fork).
import { isSupportedVersion } from '../../lib/cni/version.ts';
import { normalizeKeys } from '../../lib/cni/decode.ts';
import { validateConfig, type GeneratedValidator } from '../../lib/cni/validate.ts';
import { makeRng, type Rng } from './prng.ts';
import { applyMutation, describeMutation, drawMutation, type SchemaNode } from './schema-mutate.ts';
import type { FuzzContext, FuzzTarget } from './targets.ts';

/** What a correct plugin answers: an error with one of `codes`, or (okOr) success as well. */
export interface Expectation {
  ok: boolean;
  codes: readonly number[];
}

/** One invocation to run and judge. */
export interface FuzzCase {
  id: string;
  target: string;
  label: string;
  env: Record<string, string>;
  stdin: Buffer;
  expect: Expectation;
  /** Env holds a NUL byte: only the in-process worker can pass it (execve cannot). */
  inProcessOnly?: boolean;
}

/** What case generation needs besides the target. */
export interface CaseContext extends FuzzContext {
  distBin: string;
  /** The node namespace's name (its bind mount /run/netns/<name> is "our own" netns in the worker). */
  nodeName: string;
  /** A FIFO and a symlink made by the test: netns paths that are not namespaces. */
  fifo: string;
  symlink: string;
}

const err = (...codes: number[]): Expectation => ({ ok: false, codes });
const okOr = (...codes: number[]): Expectation => ({ ok: true, codes });
// Codes a schema-valid config may still earn: 2 unsupported field, 7 semantic (bad CIDR, overlap), 11 busy.
const SEMANTIC = [2, 7, 11];

/** Plugins that read CNI_ARGS with parseCniArgs (tuning: MAC=), themselves or through their bridge delegate (unknown keys: code 4). */
const PARSES_ARGS = new Set(['bridge', 'host-local', 'flannel', 'flannel-vxlan', 'host-gw', 'tuning']);

function baseEnv(t: FuzzTarget, ctx: CaseContext, id: string): Record<string, string> {
  return { CNI_COMMAND: 'ADD', CNI_CONTAINERID: id, CNI_NETNS: ctx.podNetns, CNI_IFNAME: 'eth0', CNI_PATH: ctx.distBin, CNI_ARGS: '' };
}

/** The declared cniVersion as the skeleton reads it (key matched as Go does, '' and absent are 0.1.0). */
function declaredVersion(config: Record<string, unknown>): unknown {
  const v = (normalizeKeys(config, { p: { cniVersion: {} } }) as { cniVersion?: unknown }).cniVersion;
  return v === undefined || v === '' ? '0.1.0' : v;
}

/** True when the plugin's own decoding (Go-style keys, then the validator) accepts `config`. */
function passes(validate: GeneratedValidator, config: unknown): boolean {
  try {
    validateConfig(validate, config);
    return true;
  } catch {
    return false;
  }
}

/**
 * The expectation for a config decided by the skeleton's version rules, then the plugin's validator.
 * DEL never blocks cleanup: any JSON object succeeds (bar the target's delCodes).
 */
export function expectFor(t: FuzzTarget, validate: GeneratedValidator, config: unknown, mutatedPath: string, command = 'ADD'): Expectation {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return err(6);
  if (command === 'DEL') return okOr(...(t.delCodes ?? []));
  const v = declaredVersion(config as Record<string, unknown>);
  if (typeof v !== 'string') return err(6);
  if (!isSupportedVersion(v)) return err(1);
  // The skeleton hands the plugin the config with its cniVersion filled in ('' and absent: 0.1.0).
  const seen = { ...(normalizeKeys(config, { p: { cniVersion: {} } }) as Record<string, unknown>), cniVersion: v };
  // prevResult is decoded by the skeleton before the plugin sees it (code 6, or 1 for its version).
  if (mutatedPath.startsWith('prevResult')) return passes(validate, seen) ? okOr(1, 6, ...SEMANTIC, ...(t.extraCodes ?? [])) : err(1, 6, 7);
  return passes(validate, seen) ? okOr(...SEMANTIC, ...(t.extraCodes ?? [])) : err(7);
}

function schemaCase(t: FuzzTarget, schema: SchemaNode, validate: GeneratedValidator, ctx: CaseContext, rng: Rng, id: string): FuzzCase {
  const base = t.baseConfig(ctx);
  let m = drawMutation(rng, schema, base);
  let config = applyMutation(base, m);
  // Never let a case write outside the test's temp dirs (the filesystem is shared with the host).
  for (let tries = 0; t.confined !== undefined && !t.confined(config, ctx); tries++) {
    if (tries > 50) throw new Error(`${t.name}: no confined mutation after 50 draws`);
    m = drawMutation(rng, schema, base);
    config = applyMutation(base, m);
  }
  const env = baseEnv(t, ctx, id);
  // Mostly ADD; some DEL, which must succeed whatever the config says (DEL never blocks cleanup).
  if (rng.chance(0.15)) env['CNI_COMMAND'] = 'DEL';
  return {
    id, target: t.name, label: `${env['CNI_COMMAND']} ${describeMutation(m)}`, env,
    stdin: Buffer.from(JSON.stringify(config)), expect: expectFor(t, validate, config, m.path.join('.'), env['CNI_COMMAND']),
  };
}

interface EnvTrick { label: string; set: Record<string, string | null>; expect: Expectation; nul?: boolean }

function envTricks(t: FuzzTarget, ctx: CaseContext): EnvTrick[] {
  const notNs = t.opensNetns ? err(3) : okOr();
  const argsErr = PARSES_ARGS.has(t.name) ? err(4) : okOr();
  const tricks: EnvTrick[] = [
    { label: 'no CNI_CONTAINERID', set: { CNI_CONTAINERID: null }, expect: err(4) },
    { label: 'no CNI_IFNAME', set: { CNI_IFNAME: null }, expect: err(4) },
    { label: 'no CNI_NETNS on ADD', set: { CNI_NETNS: null }, expect: err(4) },
    { label: 'no CNI_PATH', set: { CNI_PATH: null }, expect: err(4) },
    { label: 'lower-case command', set: { CNI_COMMAND: 'add' }, expect: err(4) },
    { label: 'unknown command', set: { CNI_COMMAND: 'DESTROY' }, expect: err(4) },
    { label: 'command with space', set: { CNI_COMMAND: 'ADD ' }, expect: err(4) },
    { label: 'netns = own (/proc/self)', set: { CNI_NETNS: '/proc/self/ns/net' }, expect: err(4) },
    { label: 'netns = own (/proc/thread-self)', set: { CNI_NETNS: '/proc/thread-self/ns/net' }, expect: err(4) },
    { label: 'netns = own (bind mount)', set: { CNI_NETNS: `/run/netns/${ctx.nodeName}` }, expect: err(4) },
    { label: 'netns = own (with ..)', set: { CNI_NETNS: `/run/netns/../netns/${ctx.nodeName}` }, expect: err(4) },
    { label: 'netns NUL', set: { CNI_NETNS: `${ctx.podNetns}\u0000x` }, expect: err(4), nul: true },
    { label: 'unknown CNI_ARGS key', set: { CNI_ARGS: 'FOO=bar' }, expect: argsErr },
    { label: 'CNI_ARGS not K=V', set: { CNI_ARGS: 'novalue' }, expect: argsErr },
    { label: 'CNI_ARGS empty key', set: { CNI_ARGS: '=x' }, expect: argsErr },
    { label: 'CNI_ARGS duplicate', set: { CNI_ARGS: 'IgnoreUnknown=1;A=1;A=2' }, expect: argsErr },
    { label: 'CNI_ARGS proto key', set: { CNI_ARGS: '__proto__=x' }, expect: argsErr },
    { label: 'CNI_ARGS huge', set: { CNI_ARGS: `IgnoreUnknown=1;X=${'v'.repeat(70_000)}` }, expect: argsErr },
    { label: 'CNI_ARGS unknown ignored', set: { CNI_ARGS: 'IgnoreUnknown=1;FOO=bar;K8S_POD_NAME=p' }, expect: okOr(...SEMANTIC) },
    { label: 'CNI_ARGS only separators', set: { CNI_ARGS: ';;;' }, expect: okOr(...SEMANTIC) },
  ];
  for (const p of ['/etc/hostname', '/dev/null', '/tmp', '/nonexistent/netns', '/proc/self/ns/mnt', '/proc/self/ns/uts', 'relative/netns', ctx.fifo, ctx.symlink, '/proc/self/fd/0']) {
    tricks.push({ label: `netns not a netns: ${p}`, set: { CNI_NETNS: p }, expect: notNs });
  }
  const ifnames = ['x'.repeat(16), 'e%d', 'eth%', '..', '.', 'eth0/..', '../eth0', 'eth 0', 'eth:0', 'eth\n0', 'eth\u001b0', '\u00e9'.repeat(8), 'eth0\u00a0'];
  for (const n of ifnames) tricks.push({ label: `bad ifname ${JSON.stringify(n)}`, set: { CNI_IFNAME: n }, expect: err(4) });
  const ids = ['../../etc/passwd', 'a/b', '..', '.hidden', '-dash', 'x'.repeat(1025), 'id\nx', 'id x', 'id;rm', '\u00e9t\u00e9', 'a\\b'];
  for (const n of ids) tricks.push({ label: `bad container id ${JSON.stringify(n.slice(0, 40))}`, set: { CNI_CONTAINERID: n }, expect: err(4) });
  return tricks;
}

function envCase(t: FuzzTarget, ctx: CaseContext, rng: Rng, id: string): FuzzCase {
  const trick = rng.pick(envTricks(t, ctx));
  const env = baseEnv(t, ctx, id);
  for (const [k, v] of Object.entries(trick.set)) {
    if (v === null) delete env[k];
    else env[k] = v;
  }
  const c: FuzzCase = { id, target: t.name, label: `env: ${trick.label}`, env, stdin: Buffer.from(JSON.stringify(t.baseConfig(ctx))), expect: trick.expect };
  if (trick.nul === true) c.inProcessOnly = true;
  return c;
}

function deepJson(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

function stdinCase(t: FuzzTarget, ctx: CaseContext, rng: Rng, id: string): FuzzCase {
  const base = t.baseConfig(ctx);
  const text = JSON.stringify(base);
  const mk = (label: string, stdin: Buffer | string, expect: Expectation): FuzzCase => ({
    id, target: t.name, label: `stdin: ${label}`, env: baseEnv(t, ctx, id), stdin: Buffer.isBuffer(stdin) ? stdin : Buffer.from(stdin), expect,
  });
  const choices: Array<() => FuzzCase> = [
    () => { const cut = rng.int(0, text.length - 1); return mk(`truncated at ${cut}`, text.slice(0, cut), err(6)); },
    () => mk('empty', '', err(6)),
    () => mk('10 MB', `${text.slice(0, -1)},"pad":"${'x'.repeat(10 * 1024 * 1024)}"}`, err(7)),
    () => mk('just over the 1 MiB cap', `${text.slice(0, -1)},"pad":"${'x'.repeat(1024 * 1024)}"}`, err(7)),
    () => mk('deep nesting in an unknown key (depth 100000)', `${text.slice(0, -1)},"deep":${deepJson(100_000)}}`, okOr(6, 7)),
    () => mk('deep nesting as the whole document', deepJson(200_000), err(6)),
    () => mk('UTF-8 BOM', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]), err(6)),
    () => mk('invalid UTF-8 outside strings', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text)]), err(6)),
    () => mk('JSON array', `[${text}]`, err(6)),
    () => mk('JSON null', 'null', err(6)),
    () => mk('JSON string', JSON.stringify(text), err(6)),
    () => mk('two documents', `${text}${text}`, err(6)),
    () => mk('trailing garbage', `${text} x`, err(6)),
    () => mk('cniVersion number', JSON.stringify({ ...base, cniVersion: 1.0 }), err(6)),
    () => mk('cniVersion unknown', JSON.stringify({ ...base, cniVersion: '9.9.9' }), err(1)),
    () => mk('cniVersion with suffix', JSON.stringify({ ...base, cniVersion: '1.0.0-rc1' }), err(1)),
    () => { const c = mk('CHECK at 0.3.1', JSON.stringify({ ...base, cniVersion: '0.3.1' }), err(1)); c.env['CNI_COMMAND'] = 'CHECK'; return c; },
    () => { const c = mk('GC at 1.0.0', JSON.stringify(base), err(1)); c.env['CNI_COMMAND'] = 'GC'; return c; },
    () => { const c = mk('STATUS at 0.4.0', JSON.stringify({ ...base, cniVersion: '0.4.0' }), err(1)); c.env['CNI_COMMAND'] = 'STATUS'; return c; },
    () => { const c = mk('GC, valid-attachments not a list', JSON.stringify({ ...base, cniVersion: '1.1.0', 'cni.dev/valid-attachments': 'all' }), okOr(7)); c.env['CNI_COMMAND'] = 'GC'; return c; },
    () => {
      const list = [{ containerID: '../../etc', ifname: 'eth0' }, { containerID: 'x'.repeat(2000), ifname: 'e'.repeat(100) }, { containerID: 7, ifname: null }];
      const c = mk('GC, odd valid-attachments', JSON.stringify({ ...base, cniVersion: '1.1.0', 'cni.dev/valid-attachments': list }), okOr(7));
      c.env['CNI_COMMAND'] = 'GC';
      return c;
    },
    () => { const c = mk('GC, empty valid list', JSON.stringify({ ...base, cniVersion: '1.1.0', 'cni.dev/valid-attachments': [] }), okOr()); c.env['CNI_COMMAND'] = 'GC'; return c; },
    () => { const c = mk('STATUS at 1.1.0', JSON.stringify({ ...base, cniVersion: '1.1.0' }), okOr(50, 51)); c.env['CNI_COMMAND'] = 'STATUS'; return c; },
    () => mk('duplicate keys (last wins: bad name)', `${text.slice(0, -1)},"name":"../../x"}`, err(7)),
    () => mk('name with path tricks', JSON.stringify({ ...base, name: '../../../etc' }), err(7)),
    () => mk('name with NUL', JSON.stringify({ ...base, name: 'net\u0000x' }), err(7)),
    // The runtime picks the binary by `type`; a plugin only checks it when its schema does (flannel's
    // plugins never use their own type as a path, so for them it may pass).
    // host-local, like the reference's, has no top-level type field: it ignores the key.
    () => mk('type with slash', JSON.stringify({ ...base, type: '../bin/sh' }), typeof t.schema === 'string' && t.name !== 'host-local' ? err(7) : okOr(7)),
    () => mk('__proto__ key', `{"__proto__":{"isGateway":true,"ipMasq":true},${text.slice(1)}`, okOr(...SEMANTIC)),
    () => mk('lone surrogate in a string', `${text.slice(0, -1)},"x":"\\ud800"}`, okOr(...SEMANTIC)),
  ];
  return rng.pick(choices)();
}

/** Case `i` of `seed` for target `t`. */
export function makeCase(t: FuzzTarget, schema: SchemaNode, validate: GeneratedValidator, ctx: CaseContext, seed: number, i: number): FuzzCase {
  const rng = makeRng(seed).fork(i);
  const id = `fz${t.name.replace(/[^a-z]/g, '')}${i}`;
  const r = rng.next();
  if (r < 0.6) return schemaCase(t, schema, validate, ctx, rng, id);
  if (r < 0.85) return envCase(t, ctx, rng, id);
  return stdinCase(t, ctx, rng, id);
}

// CNI_ARGS parsing: "K=V;K2=V2" with the reference's IgnoreUnknown semantics.
import { invalidEnv } from './errors.ts';

/** Parsed CNI_ARGS: key -> value, null prototype so "__proto__" and friends are plain keys. */
export type CniArgs = Readonly<Record<string, string>>;

/** Keys every plugin accepts: runtimes (kubelet via CRI) send the K8S_POD_* family to every plugin. */
const ALWAYS_KNOWN = new Set(['IgnoreUnknown', 'K8S_POD_NAMESPACE', 'K8S_POD_NAME', 'K8S_POD_INFRA_CONTAINER_ID', 'K8S_POD_UID']);
const MAX_ARGS_BYTES = 64 * 1024;
const MAX_KEY_LEN = 128;
const MAX_VALUE_LEN = 4096;
const KEY_RE = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/** Options for parseCniArgs: the keys this plugin understands (beyond the always-known ones). */
export interface ParseCniArgsOptions {
  known?: readonly string[];
}

function isIgnoreUnknownKey(k: string): boolean {
  return k.toLowerCase() === 'ignoreunknown';
}

function isTrue(v: string): boolean {
  return v === '1' || v.toLowerCase() === 'true';
}

/**
 * Parse CNI_ARGS. Unknown keys are an error (code 4) unless IgnoreUnknown=1|true is among the
 * pairs (key matched case-insensitively) or the plugin lists them in `known`; K8S_POD_* keys are
 * always accepted. Values may contain '=' (split at the first one); empty segments are skipped.
 */
export function parseCniArgs(raw: string | undefined, opts: ParseCniArgsOptions = {}): CniArgs {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  if (raw === undefined || raw === '') return out;
  if (raw.length > MAX_ARGS_BYTES) throw invalidEnv('CNI_ARGS too long', `${raw.length} characters, limit ${MAX_ARGS_BYTES}`);
  if (raw.includes('\0')) throw invalidEnv('invalid CNI_ARGS', 'contains a NUL character');
  const pairs: [string, string][] = [];
  for (const item of raw.split(';')) {
    if (item === '') continue;
    const eq = item.indexOf('=');
    if (eq <= 0) throw invalidEnv('invalid CNI_ARGS', `pair ${JSON.stringify(item.slice(0, 64))} is not KEY=VALUE`);
    const key = item.slice(0, eq);
    const value = item.slice(eq + 1);
    if (key.length > MAX_KEY_LEN || !KEY_RE.test(key)) {
      throw invalidEnv('invalid CNI_ARGS', `bad key ${JSON.stringify(key.slice(0, MAX_KEY_LEN))}`);
    }
    if (value.length > MAX_VALUE_LEN) {
      throw invalidEnv('invalid CNI_ARGS', `value of ${key} is ${value.length} characters, limit ${MAX_VALUE_LEN}`);
    }
    if (Object.hasOwn(out, key)) throw invalidEnv('invalid CNI_ARGS', `duplicate key ${key}`);
    out[key] = value;
    pairs.push([key, value]);
  }
  const ignoreUnknown = pairs.some(([k, v]) => isIgnoreUnknownKey(k) && isTrue(v));
  if (!ignoreUnknown) {
    const known = new Set(opts.known ?? []);
    for (const [k] of pairs) {
      if (ALWAYS_KNOWN.has(k) || k.startsWith('K8S_POD_') || isIgnoreUnknownKey(k) || known.has(k)) continue;
      throw invalidEnv('unknown CNI_ARGS key', `${k} (set IgnoreUnknown=1 to ignore unknown keys)`);
    }
  }
  return out;
}

/** Format args back into CNI_ARGS form (for delegation with changed args); keys in insertion order. */
export function formatCniArgs(args: CniArgs): string {
  return Object.entries(args)
    .map(([k, v]) => `${k}=${v}`)
    .join(';');
}

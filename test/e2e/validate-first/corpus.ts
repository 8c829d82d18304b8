// The bad-input corpus as data: corpus/common.json (env and generic config cases, run against every
// plugin) plus corpus/<plugin>.json (a valid base config and the plugin's own bad inputs). A case is
// the base with some keys set or removed, some env changed, or stdin replaced; placeholders ($DATA,
// $POD, $NODE, $SUBNETFILE, $HOSTVETH) are filled in by the test.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One bad input, as written in the corpus files. */
export interface BadCase {
  name: string;
  /** Dotted paths (array indices as numbers) set to a value on a copy of the base config. */
  set?: Record<string, unknown>;
  /** Dotted paths removed from the base config. */
  unset?: string[];
  /** Env changes; null removes the variable. */
  env?: Record<string, string | null>;
  /** CNI_ARGS. */
  args?: string;
  /** Raw stdin instead of the config. */
  stdin?: string;
  /** Acceptable CNI error codes; default: any code but 999 (unexpected) and 11 (retry). */
  codes?: number[];
  /** common.json only: plugins this case does not apply to (with the reason in `why`). */
  skip?: string[];
  why?: string;
}

/** A plugin's corpus file. */
export interface PluginCorpus {
  plugin: string;
  /** The pod setup the base config needs: a veth eth0 in the pod with `$HOSTVETH` in the node. */
  base: Record<string, unknown>;
  env?: Record<string, string>;
  cases: BadCase[];
}

const DIR = join(import.meta.dirname, 'corpus');

/** Reads corpus/<plugin>.json and the common cases that apply to it. */
export function loadCorpus(plugin: string): { corpus: PluginCorpus; cases: BadCase[] } {
  const corpus = JSON.parse(readFileSync(join(DIR, `${plugin}.json`), 'utf8')) as PluginCorpus;
  const common = (JSON.parse(readFileSync(join(DIR, 'common.json'), 'utf8')) as { cases: BadCase[] }).cases;
  const cases = [...common.filter((c) => !(c.skip ?? []).includes(plugin)).map((c) => ({ ...c, name: `common: ${c.name}` })), ...corpus.cases];
  return { corpus, cases };
}

function pathParts(path: string): Array<string | number> {
  return path.split('.').map((p) => (/^[0-9]+$/.test(p) ? Number(p) : p));
}

function setPath(doc: Record<string, unknown>, path: string, value: unknown, remove: boolean): void {
  const parts = pathParts(path);
  let cur = doc as Record<string | number, unknown>;
  for (const p of parts.slice(0, -1)) {
    if (typeof cur[p] !== 'object' || cur[p] === null) cur[p] = typeof parts[parts.indexOf(p) + 1] === 'number' ? [] : {};
    cur = cur[p] as Record<string | number, unknown>;
  }
  const last = parts[parts.length - 1] as string | number;
  if (remove) delete cur[last];
  else cur[last] = value;
}

/** Replaces $NAME placeholders in every string of `v`. */
export function fill<T>(v: T, vars: Readonly<Record<string, string>>): T {
  const s = JSON.stringify(v).replace(/\$([A-Z]+)/g, (m, k: string) => vars[k] ?? m);
  return JSON.parse(s) as T;
}

/** The stdin text and env changes of `c` applied to `base`. */
export function renderCase(base: Record<string, unknown>, c: BadCase): { stdin: string; env: Record<string, string | null> } {
  const env: Record<string, string | null> = { ...(c.env ?? {}) };
  if (c.args !== undefined) env['CNI_ARGS'] = c.args;
  if (c.stdin !== undefined) return { stdin: c.stdin, env };
  const doc = structuredClone(base);
  for (const p of c.unset ?? []) setPath(doc, p, undefined, true);
  for (const [p, v] of Object.entries(c.set ?? {})) setPath(doc, p, v, false);
  return { stdin: JSON.stringify(doc), env };
}

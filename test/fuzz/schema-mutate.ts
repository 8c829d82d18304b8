// Schema-driven mutations: walk a plugin's JSON Schema alongside a valid config and produce one changed
// copy per case (wrong type, out-of-range or huge number, bad/overlapping CIDR, IPv4-mapped IPv6, missing
// required key, extra nesting, control characters, over-long string...). Whether the result is still
// valid is decided afterwards by the generated validator, not guessed here.
import type { Rng } from './prng.ts';

/** The parts of a JSON Schema node the mutator reads. */
export interface SchemaNode {
  type?: string;
  properties?: Readonly<Record<string, SchemaNode>>;
  required?: readonly string[];
  items?: SchemaNode;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  pattern?: string;
}

/** A location in the config: keys and array indexes from the root. */
export type JsonPath = ReadonlyArray<string | number>;

/** One mutation: where, what kind, and the new value (undefined = key removed). */
export interface Mutation {
  path: JsonPath;
  kind: string;
  value: unknown;
  remove?: boolean;
}

/** A field the walk found: its path, its schema, whether the config has it, and its parent's required list. */
interface Target {
  path: JsonPath;
  schema: SchemaNode;
  present: boolean;
  required: boolean;
  key: string;
}

/** Keys holding paths chosen by the node's administrator: their content is trusted (docs/security.md). */
const TRUSTED_PATH_KEYS = new Set(['dataDir', 'resolvConf', 'subnetFile']);
// Keys whose strings are addresses or prefixes: they get network-specific garbage as well.
const ADDRESS_KEYS = new Set(['subnet', 'rangeStart', 'rangeEnd', 'gateway', 'gw', 'dst', 'hostIP', 'ips', 'address']);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Every mutable field: schema properties (present or not) and the config's array elements. */
export function collectTargets(schema: SchemaNode, config: unknown, path: JsonPath = [], key = '(root)', required = false): Target[] {
  const out: Target[] = [{ path, schema, present: config !== undefined, required, key }];
  if (schema.properties) {
    const obj = isObject(config) ? config : undefined;
    for (const [k, sub] of Object.entries(schema.properties)) {
      out.push(...collectTargets(sub, obj?.[k], [...path, k], k, schema.required?.includes(k) ?? false));
    }
  }
  if (schema.items && Array.isArray(config)) {
    config.forEach((el, i) => out.push(...collectTargets(schema.items as SchemaNode, el, [...path, i], key, false)));
  }
  return out;
}

function deepNest(depth: number, leaf: unknown, asArray: boolean): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = asArray ? [v] : { a: v };
  return v;
}

const WRONG_TYPES: ReadonlyArray<[string, unknown]> = [
  ['number', 42], ['negative', -1], ['float', 1.5], ['boolean', true], ['null', null], ['string', 'weft'],
  ['empty-array', []], ['array', [1, 'two', null]], ['empty-object', {}], ['object', { nested: { x: 1 } }],
];

function matchesType(type: string | undefined, v: unknown): boolean {
  switch (type) {
    case undefined: return true;
    case 'string': return typeof v === 'string';
    case 'boolean': return typeof v === 'boolean';
    case 'integer': return Number.isInteger(v);
    case 'number': return typeof v === 'number';
    case 'array': return Array.isArray(v);
    case 'object': return isObject(v);
    case 'null': return v === null;
    default: return false;
  }
}

function numberValues(s: SchemaNode): Array<[string, unknown]> {
  const v: Array<[string, unknown]> = [
    ['huge', 1e308], ['huge-neg', -1e308], ['2^53+1', 2 ** 53 + 1], ['2^64', 2 ** 64], ['zero', 0], ['neg', -1],
    ['fraction', 0.5], ['tiny', 5e-324],
  ];
  if (s.minimum !== undefined) v.push(['below-min', s.minimum - 1], ['min', s.minimum]);
  if (s.maximum !== undefined) v.push(['above-max', s.maximum + 1], ['max', s.maximum]);
  return v;
}

const CONTROL = ['\u0000', '\n', '\r\n', '\t', '\u001b[31m', '\u007f', '\u0085', '\u2028', '\u202e', '\ud800'];
const PATH_TRICKS = ['../../../../etc/passwd', '..', '.', '/', 'a/../../b', './x', '/etc/shadow', 'x/', '%2e%2e%2f', '~root'];
const BAD_ADDRESSES = [
  '10.0.0.0/33', '10.0.0.256/24', '300.1.1.1', '10.0.0.0/-1', '10.0.0.0/', '/24', '10.0.0', '10.0.0.0.0/24',
  '::ffff:10.77.0.0/120', '::ffff:10.77.0.9', '::ffff:a4d:1', '10.77.0.0/31', '10.77.0.0/32', '0.0.0.0/0', '::/0',
  'fe80::/64', 'ff02::1', '224.0.0.0/4', '255.255.255.255/32', '10.77.0.0/24 ', ' 10.77.0.0/24', '010.077.000.000/24',
  '0x0a.0.0.0/8', '10.77.0.0/24\n', 'fd00::/129', 'fd00:::1', '1::2::3', '10.77.0.0/08', '10.77.0.0/24/24',
];

function stringValues(s: SchemaNode, key: string): Array<[string, unknown]> {
  const max = s.maxLength ?? 256;
  const v: Array<[string, unknown]> = [
    ['empty', ''], ['over-long', 'x'.repeat(max + 1)], ['at-max', 'a'.repeat(max)], ['100k', 'y'.repeat(100_000)],
    ['unicode', 'w\u00e9ft\u{1f600}'], ['spaces', ' leading and trailing '],
  ];
  for (const c of CONTROL) v.push([`control-${JSON.stringify(c)}`, `ab${c}cd`]);
  for (const p of PATH_TRICKS) v.push([`path-${p}`, p]);
  if (ADDRESS_KEYS.has(key)) for (const a of BAD_ADDRESSES) v.push([`address-${JSON.stringify(a)}`, a]);
  return v;
}

/** Candidate values for one target (a generous list; one is drawn per case). */
function candidates(t: Target, current: unknown): Array<[string, unknown]> {
  const s = t.schema;
  const v: Array<[string, unknown]> = WRONG_TYPES.filter(([, x]) => !matchesType(s.type, x)).map(([k, x]) => [`wrong-type-${k}`, x]);
  if (TRUSTED_PATH_KEYS.has(t.key)) return v;
  if (s.type === 'integer' || s.type === 'number') v.push(...numberValues(s));
  if (s.type === 'string' || ADDRESS_KEYS.has(t.key)) v.push(...stringValues(s, t.key));
  if (s.type === 'array') {
    const el = Array.isArray(current) && current.length > 0 ? current[0] : null;
    v.push(['array-over-max', Array.from({ length: (s.maxItems ?? 64) + 1 }, () => el)]);
    // The same element twice: overlapping ranges, duplicate routes, duplicate port mappings.
    if (Array.isArray(current) && current.length > 0) v.push(['array-duplicate', [...(current as unknown[]), ...(current as unknown[])]]);
    v.push(['array-of-wrong', [42, 'x', null, [[]]]], ['array-deep', deepNest(2000, el, true)]);
  }
  if (s.type === 'object' || s.type === undefined) {
    v.push(['object-deep', deepNest(2000, current ?? 1, false)]);
    if (isObject(current)) {
      v.push(['object-extra-keys', { ...current, unknownKey: { deeper: [1, { x: 'y' }] }, ['\u0000odd']: true }]);
      v.push(['object-proto', JSON.parse(`{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},${JSON.stringify(current).slice(1)}`.replace(',}', '}'))]);
    }
  }
  v.push(['wrapped-in-array', [current ?? null]], ['wrapped-in-object', { value: current ?? null }]);
  return v;
}

/** Draws one mutation of `config` under `schema`. */
export function drawMutation(rng: Rng, schema: SchemaNode, config: unknown): Mutation {
  const targets = collectTargets(schema, config).filter((t) => t.path.length > 0);
  const t = rng.pick(targets);
  const current = getAt(config, t.path);
  // Removing is one choice among the values; it matters most for required keys.
  if (t.present && !TRUSTED_PATH_KEYS.has(t.key) && rng.chance(t.required ? 0.3 : 0.08)) return { path: t.path, kind: 'remove', value: undefined, remove: true };
  const [kind, value] = rng.pick(candidates(t, current));
  return { path: t.path, kind, value };
}

function getAt(root: unknown, path: JsonPath): unknown {
  let v = root;
  for (const k of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<string | number, unknown>)[k];
  }
  return v;
}

/** A deep copy of `config` with `m` applied (missing parents are created as objects). */
export function applyMutation(config: unknown, m: Mutation): unknown {
  const root = structuredClone(config) as Record<string | number, unknown>;
  let parent: Record<string | number, unknown> = root;
  for (const k of m.path.slice(0, -1)) {
    const next = parent[k];
    if (typeof next !== 'object' || next === null) parent[k] = {};
    parent = parent[k] as Record<string | number, unknown>;
  }
  const last = m.path[m.path.length - 1];
  if (last === undefined) return m.value;
  if (m.remove === true) {
    if (Array.isArray(parent) && typeof last === 'number') parent.splice(last, 1);
    else delete parent[last];
  } else {
    parent[last] = m.value;
  }
  return root;
}

/** A short label for reports: "ipam.ranges.0.0.subnet: address-\"10.0.0.0/33\"". */
export function describeMutation(m: Mutation): string {
  return `${m.path.join('.')}: ${m.kind}`;
}

// Key normalisation with the semantics of Go's encoding/json, which the reference plugins decode with:
// an object key names a struct field when it equals the field's JSON name exactly or case-folded
// (exact spelling wins when two fields fold alike), keys are applied in order so a later key for the
// same field overrides an earlier one (objects merge into the value already decoded, array elements
// too), null leaves the field as it was, and unknown keys stay untouched. Types are checked by the
// generated ajv validators on the result; a value a later key overrode is only type-checked here
// (Go still reports its type error after decoding the rest). Pure; runs anywhere.

/**
 * The field names of one JSON value, derived at build time from a JSON Schema (scripts/gen-validators.ts):
 * `p`: a Go struct: its fields in schema order; `i`: an array's element; `m`: a Go map's values
 * (keys matched exactly). A node with none of them is a leaf, replaced as a whole.
 */
export interface FieldTree {
  p?: Readonly<Record<string, FieldTree>>;
  i?: FieldTree;
  m?: FieldTree;
  /** The JSON type the schema gives the value (Go's field type), when it names one. */
  t?: JsonType;
}

/** JSON Schema's type names. */
export type JsonType = 'string' | 'boolean' | 'integer' | 'number' | 'object' | 'array' | 'null';

/** A value a later key of the same field overrode, with the field's tree and its dotted path. */
export interface Shadowed {
  path: string;
  value: unknown;
  tree: FieldTree;
}

type OnShadow = (s: Shadowed) => void;

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Go's case folding of a JSON key (encoding/json fold.go): ASCII letters fold to one case, and the
 * only non-ASCII runes whose fold orbit holds an ASCII letter are KELVIN SIGN (k) and LONG S (s).
 */
export function foldKey(key: string): string {
  // A loop, not a global replace: every decode folds the keys unknown to the schema, and V8 compiles a
  // global regular expression to machine code on its first use (about 50 us of an ADD).
  let out = '';
  let from = 0;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    const folded = c >= 0x41 && c <= 0x5a ? c + 0x20 : c === 0x212a ? 0x6b : c === 0x17f ? 0x73 : -1; // A-Z, KELVIN SIGN -> k, LONG S -> s
    if (folded < 0) continue;
    out += key.slice(from, i) + String.fromCharCode(folded);
    from = i + 1;
  }
  return from === 0 ? key : out + key.slice(from);
}

const foldIndexes = new WeakMap<object, Map<string, string>>();

/** Folded name -> the first field (schema order) with that fold, as Go picks among fold-equal fields. */
function foldIndex(fields: Readonly<Record<string, FieldTree>>): Map<string, string> {
  let idx = foldIndexes.get(fields);
  if (idx === undefined) {
    idx = new Map();
    for (const name of Object.keys(fields)) {
      const f = foldKey(name);
      if (!idx.has(f)) idx.set(f, name);
    }
    foldIndexes.set(fields, idx);
  }
  return idx;
}

/** The struct field `key` decodes into, or undefined for a key Go ignores. */
export function fieldFor(fields: Readonly<Record<string, FieldTree>>, key: string): string | undefined {
  return Object.hasOwn(fields, key) ? key : foldIndex(fields).get(foldKey(key));
}

// JSON.parse makes "__proto__" an own property; plain assignment would set the prototype instead.
function put(o: Obj, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Decodes `value` into `prev` (the value already decoded for this field, if any) following `tree`. */
function decodeInto(prev: unknown, value: unknown, tree: FieldTree, path: string, onShadow: OnShadow): unknown {
  if (tree.p !== undefined && isObj(value)) {
    if (prev !== undefined && !isObj(prev)) onShadow({ path, value: prev, tree });
    return decodeStruct(isObj(prev) ? prev : undefined, value, tree.p, path, onShadow);
  }
  if (tree.m !== undefined && isObj(value)) {
    if (prev !== undefined && !isObj(prev)) onShadow({ path, value: prev, tree });
    return decodeMap(isObj(prev) ? prev : undefined, value, tree.m, path, onShadow);
  }
  if (tree.i !== undefined && Array.isArray(value)) {
    if (prev !== undefined && !Array.isArray(prev)) onShadow({ path, value: prev, tree });
    const old = Array.isArray(prev) ? prev : [];
    // Go decodes each element into the slice's existing element at that index, then truncates.
    old.slice(value.length).forEach((e, n) => onShadow({ path: `${path}.${value.length + n}`, value: e, tree: tree.i as FieldTree }));
    return value.map((e, n) => decodeInto(old[n], e, tree.i as FieldTree, `${path}.${n}`, onShadow));
  }
  if (prev !== undefined) onShadow({ path, value: prev, tree });
  return value;
}

function decodeStruct(prev: Obj | undefined, value: Obj, fields: Readonly<Record<string, FieldTree>>, path: string, onShadow: OnShadow): Obj {
  const out: Obj = {};
  if (prev !== undefined) for (const [k, v] of Object.entries(prev)) put(out, k, v);
  for (const [key, v] of Object.entries(value)) {
    const name = fieldFor(fields, key);
    if (name === undefined) {
      put(out, key, v);
      continue;
    }
    // Go: null into a non-pointer field is a no-op, and the field keeps what an earlier key set.
    if (v === null) continue;
    const at = path === '' ? name : `${path}.${name}`;
    put(out, name, decodeInto(Object.hasOwn(out, name) ? out[name] : undefined, v, fields[name] as FieldTree, at, onShadow));
  }
  return out;
}

function decodeMap(prev: Obj | undefined, value: Obj, elem: FieldTree, path: string, onShadow: OnShadow): Obj {
  const out: Obj = {};
  if (prev !== undefined) for (const [k, v] of Object.entries(prev)) put(out, k, v);
  // Map keys are data, kept as spelled; each value is decoded afresh (Go zeroes map elements).
  for (const [key, v] of Object.entries(value)) {
    if (Object.hasOwn(out, key)) onShadow({ path: `${path}.${key}`, value: out[key], tree: elem });
    put(out, key, decodeInto(undefined, v, elem, `${path}.${key}`, onShadow));
  }
  return out;
}

/**
 * A copy of `doc` whose keys are spelled as `tree` names them, decoded the way Go's encoding/json
 * fills structs (see the file comment). A value of the wrong JSON type is kept as it is, for the
 * schema to refuse. Pure.
 */
export function normalizeKeys(doc: unknown, tree: FieldTree, onShadow: OnShadow = () => undefined): unknown {
  return decodeInto(undefined, doc, tree, '', onShadow);
}

function typeOk(v: unknown, t: JsonType | undefined): boolean {
  switch (t) {
    case undefined:
      return true;
    case 'integer':
      return Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'object':
      return isObj(v);
    case 'array':
      return Array.isArray(v);
    case 'null':
      return v === null;
    default:
      return typeof v === t;
  }
}

/**
 * The dotted path of the first value inside `value` (itself included) whose JSON type the tree's
 * schema types refuse, as Go's decoder would while filling the field; undefined when it decodes.
 * null decodes into anything, as in Go. Pure.
 */
export function goTypeError(value: unknown, tree: FieldTree, path: string): string | undefined {
  if (value === null) return undefined;
  if (!typeOk(value, tree.t)) return path;
  if (tree.p !== undefined && isObj(value)) {
    for (const [k, v] of Object.entries(value)) {
      const name = fieldFor(tree.p, k);
      const bad = name === undefined ? undefined : goTypeError(v, tree.p[name] as FieldTree, `${path}.${name}`);
      if (bad !== undefined) return bad;
    }
  }
  if (tree.m !== undefined && isObj(value)) {
    for (const [k, v] of Object.entries(value)) {
      const bad = goTypeError(v, tree.m, `${path}.${k}`);
      if (bad !== undefined) return bad;
    }
  }
  if (tree.i !== undefined && Array.isArray(value)) {
    for (const [n, e] of value.entries()) {
      const bad = goTypeError(e, tree.i, `${path}.${n}`);
      if (bad !== undefined) return bad;
    }
  }
  return undefined;
}

/** The FieldTree of a JSON Schema object: properties, items and additionalProperties (build time). */
export function fieldTreeOf(schema: unknown): FieldTree {
  if (!isObj(schema)) return {};
  const out: { p?: Record<string, FieldTree>; i?: FieldTree; m?: FieldTree; t?: JsonType } = {};
  if (typeof schema['type'] === 'string') out.t = schema['type'] as JsonType;
  const props = schema['properties'];
  if (isObj(props)) {
    out.p = {};
    for (const [k, s] of Object.entries(props)) out.p[k] = fieldTreeOf(s);
  }
  if (isObj(schema['items'])) out.i = fieldTreeOf(schema['items']);
  if (isObj(schema['additionalProperties'])) out.m = fieldTreeOf(schema['additionalProperties']);
  return out;
}

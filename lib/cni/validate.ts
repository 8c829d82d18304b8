// Config validation with build-time generated ajv validators (gen/validators/<name>.js): no ajv at run time.
import { goTypeError, normalizeKeys } from './decode.ts';
import type { FieldTree, Shadowed } from './decode.ts';
import { invalidConfig } from './errors.ts';

/** One ajv error, the fields we use (ajv's ErrorObject is structurally compatible). */
export interface SchemaError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

/** A generated validator: ajv's ValidateFunction shape (errors set after a failed call). */
export interface GeneratedValidator {
  (data: unknown): boolean;
  errors?: SchemaError[] | null;
  /** The schema's field names (set by the generator): keys are matched as Go's encoding/json does. */
  fields?: FieldTree;
}

const MAX_SHOWN = 80;

/** Decode a JSON pointer ("/ipam/ranges/0") into its segments (RFC 6901 escapes ~1, ~0). */
function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Dotted path for messages: ["ipam","ranges","0","subnet"] -> "ipam.ranges.0.subnet"; root -> "(config)". */
export function formatFieldPath(segments: readonly string[]): string {
  return segments.length ? segments.join('.') : '(config)';
}

function valueAt(root: unknown, segments: readonly string[]): unknown {
  let v = root;
  for (const s of segments) {
    if (typeof v !== 'object' || v === null || !Object.hasOwn(v, s)) return undefined;
    v = (v as Record<string, unknown>)[s];
  }
  return v;
}

/**
 * A value for an error message: JSON-encoded (so control characters show as \uXXXX escapes),
 * with DEL, C1 controls and bidi/line-separator characters escaped too, truncated to ~80 chars.
 */
export function formatShownValue(value: unknown): string {
  let s: string;
  try {
    s = value === undefined ? 'undefined' : (JSON.stringify(value) ?? String(value));
  } catch {
    s = String(value);
  }
  s = s.replace(/[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) =>
    `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return s.length > MAX_SHOWN ? `${s.slice(0, MAX_SHOWN)}...` : s;
}

/** The message of one schema error, naming the field and the bad value. */
export function formatSchemaError(err: SchemaError, root: unknown): string {
  const segs = pointerSegments(err.instancePath);
  const p = err.params;
  if (err.keyword === 'required' && typeof p['missingProperty'] === 'string') {
    return `${formatFieldPath([...segs, p['missingProperty']])} is required`;
  }
  if (err.keyword === 'additionalProperties' && typeof p['additionalProperty'] === 'string') {
    const field = [...segs, p['additionalProperty']];
    return `${formatFieldPath(field)} is not allowed (value ${formatShownValue(valueAt(root, field))})`;
  }
  const why = err.message ?? `fails "${err.keyword}"`;
  return `${formatFieldPath(segs)} ${why} (value ${formatShownValue(valueAt(root, segs))})`;
}

/**
 * Decode `raw` as the Go reference does (keys matched to the schema's fields case-insensitively, see
 * decode.ts), check it with a generated validator and return it typed as T; on failure throw code 7
 * ("invalid configuration") whose details name the first failing field and its value.
 */
export function validateConfig<T>(validate: GeneratedValidator, raw: unknown, what = 'configuration'): T {
  const shadowed: Shadowed[] = [];
  const value = validate.fields === undefined ? raw : normalizeKeys(raw, validate.fields, (x) => shadowed.push(x));
  for (const x of shadowed) {
    // Go reports a type error even in a value that a later key of the same field replaced.
    const bad = goTypeError(x.value, x.tree, x.path);
    if (bad !== undefined) {
      throw invalidConfig(`invalid ${what}: ${bad} must be ${x.tree.t ?? 'of its schema type'} (value ${formatShownValue(x.value)}, overridden by a later key)`, 'schema keyword "type"');
    }
  }
  if (validate(value)) return value as T;
  const first = validate.errors?.[0];
  const why = first ? formatSchemaError(first, value) : 'schema validation failed';
  throw invalidConfig(`invalid ${what}: ${why}`, first ? `schema keyword "${first.keyword}"` : '');
}

/**
 * DEL's reading of a config that validateConfig refuses: the same Go-style key decoding, no checks,
 * so DEL can still find what ADD made (DEL never blocks cleanup). A non-object reads as {}.
 */
export function decodeForDel(validate: GeneratedValidator, raw: unknown): Record<string, unknown> {
  const doc = validate.fields === undefined ? raw : normalizeKeys(raw, validate.fields);
  return typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? (doc as Record<string, unknown>) : {};
}

/** A string at `path` of a decoded document, or undefined when absent or of another type. */
export function stringAt(doc: unknown, ...path: string[]): string | undefined {
  let v = doc;
  for (const k of path) v = typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>)[k] : undefined;
  return typeof v === 'string' ? v : undefined;
}

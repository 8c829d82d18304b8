// etcd's JSON gateway wire format (grpc-gateway over etcd's protobuf, etcd 3.4+): keys and values
// in base64, int64 fields as decimal strings, enums by name, and fields at their default value left
// out (no `succeeded` is false, no `kvs` is none, no `TTL` is 0, no event `type` is PUT). Pure.
import type { EtcdKeyValue } from './api.ts';

/** A decoded gateway answer (int64 fields are JSON strings; fields at their default are absent). */
export type GatewayJson = Record<string, unknown>;

/** The base64 form etcd's gateway takes and gives for keys and values. */
export const b64 = (s: string | Buffer): string => (typeof s === 'string' ? Buffer.from(s, 'utf8') : s).toString('base64');
/** Decodes a base64 gateway field; an absent one (the empty default) is empty. */
export const unb64 = (s: unknown): Buffer => (typeof s === 'string' ? Buffer.from(s, 'base64') : Buffer.alloc(0));

/** An int64 field (a JSON string, absent when 0) as a decimal string. */
export function int64(v: unknown): string {
  return typeof v === 'string' && /^-?\d+$/.test(v) ? v : typeof v === 'number' ? String(Math.trunc(v)) : '0';
}

/** The header revision of an answer (0 when absent). */
export function headerRevision(r: GatewayJson): number {
  const h = r['header'];
  return Number(int64(typeof h === 'object' && h !== null ? (h as GatewayJson)['revision'] : undefined));
}

/** A gateway mvccpb.KeyValue decoded. */
export function parseGatewayKv(kv: GatewayJson): EtcdKeyValue {
  return {
    key: unb64(kv['key']).toString('utf8'),
    value: unb64(kv['value']),
    createRevision: int64(kv['create_revision']),
    modRevision: int64(kv['mod_revision']),
    lease: int64(kv['lease']),
  };
}

/** The range end that selects every key starting with `prefix` (etcd's prefix convention: last byte + 1). */
export function prefixRangeEnd(prefix: string): string {
  const b = Buffer.from(prefix, 'utf8');
  b[b.length - 1] = (b[b.length - 1] ?? 0) + 1;
  return b.toString('latin1');
}

/** The body of a txn that runs `op` when `key`'s create/mod revision equals `revision`. */
export function formatTxn(key: string, cmp: 'create' | 'mod', revision: string, op: GatewayJson): GatewayJson {
  const target = cmp === 'create' ? { target: 'CREATE', create_revision: revision } : { target: 'MOD', mod_revision: revision };
  return { compare: [{ result: 'EQUAL', key: b64(key), ...target }], success: [op] };
}

/** etcd's error text in a gateway error body ({"error": ..., "message": ...}), else the body's start. */
export function parseGatewayError(text: string): string {
  let m = text.trim().slice(0, 200);
  try {
    const j = JSON.parse(text) as GatewayJson;
    const inner = typeof j['error'] === 'object' && j['error'] !== null ? j['error'] as GatewayJson : j;
    const msg = inner['message'] ?? inner['error'];
    if (typeof msg === 'string') m = msg.trim();
  } catch {
    // not JSON (etcd's own HTTP errors are plain text): show it as it is
  }
  // etcd refuses a gateway request carrying a client certificate while auth is on (the CN cannot
  // name the user through the gateway): say what to do instead of only quoting it.
  if (m.includes('CommonName of client')) return `${m}: with etcd auth on, the JSON gateway takes no client certificate; read with --etcd-username/--etcd-password and --etcd-cafile only`;
  return m;
}

/** True for etcd's answer to a token it no longer knows (expired, or etcd restarted). */
export function isInvalidTokenError(message: string): boolean {
  return /invalid auth token|auth token is not provided|ErrInvalidAuthToken/i.test(message);
}

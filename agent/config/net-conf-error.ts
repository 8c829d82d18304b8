// The error every net-conf.json problem becomes: it names the key and the value that was refused.

/** A net-conf.json validation failure; `key` is the flannel key path (e.g. "Backend.VNI"). */
export class NetConfError extends Error {
  readonly key: string;
  readonly value: unknown;

  constructor(key: string, value: unknown, problem: string, options?: ErrorOptions) {
    super(`net-conf: ${key}: ${problem} (got ${describe(value)})`, options);
    this.name = 'NetConfError';
    this.key = key;
    this.value = value;
  }
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  try {
    const s = JSON.stringify(value);
    return s.length > 80 ? `${s.slice(0, 77)}...` : s;
  } catch {
    return String(value);
  }
}

/**
 * Looks a key up the way Go's encoding/json does (flannel is Go): an exact match first, then a
 * case-insensitive one, so configs written as "Subnetlen" or "vni" keep working after migration.
 */
export function getKey(obj: Record<string, unknown>, key: string): unknown {
  if (Object.hasOwn(obj, key)) return obj[key];
  const lower = key.toLowerCase();
  for (const k of Object.keys(obj)) {
    if (k.toLowerCase() === lower) return obj[k];
  }
  return undefined;
}

/** True for a plain JSON object (not null, not an array). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

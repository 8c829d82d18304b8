// Go encoding/json key matching for the bandwidth config: a key names a field exactly or, failing
// that, case-insensitively (containerd sends runtimeConfig.bandwidth as {"IngressRate": ...});
// repeated keys: the last one wins. Runs before the schema.
// TODO(issue 13): switch to lib/cni's generic normaliser once it lands; this is the one call site.

/** Which keys of an object are fields, and the shape of the objects some of them hold. */
export interface KeyShape {
  [field: string]: KeyShape | true;
}

const ENTRY: KeyShape = {
  ingressRate: true, ingressBurst: true, egressRate: true, egressBurst: true, unshapedSubnets: true, shapedSubnets: true,
};

/** The fields of a bandwidth config whose spelling we fold (the CNI fields are the skeleton's). */
export const BANDWIDTH_SHAPE: KeyShape = {
  ...ENTRY,
  runtimeConfig: { bandwidth: ENTRY },
  'cni.dev/valid-attachments': true,
};

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A copy of `value` with every key that names a field of `shape` (in any case) spelt as the field. Pure. */
export function foldKeys(value: unknown, shape: KeyShape): unknown {
  if (!isObject(value)) return value;
  const byFolded = new Map<string, string>();
  for (const f of Object.keys(shape)) byFolded.set(f.toLowerCase(), f);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const field = Object.hasOwn(shape, k) ? k : byFolded.get(k.toLowerCase());
    if (field === undefined) {
      out[k] = v;
      continue;
    }
    const sub = shape[field];
    out[field] = sub === true || sub === undefined ? v : foldKeys(v, sub);
  }
  return out;
}

// JSON Schema fragments shared by every plugin's config schema (compiled at build time by
// scripts/gen-validators.ts; nothing here runs ajv). Patterns mirror lib/cni/ids.ts.

/** "x.y.z": the shape of a cniVersion; whether it is supported is the skeleton's job (code 1). */
export const CNI_VERSION_PATTERN = '^[0-9]+\\.[0-9]+\\.[0-9]+$';

/** Network names and container IDs: the reference's charset (ids.ts validateNetworkName). */
export const NAME_PATTERN = '^[a-zA-Z0-9][a-zA-Z0-9_.-]*$';

/** A plugin type is looked up as one file name on CNI_PATH: same charset, so no '/' or "..". */
export const PLUGIN_TYPE_PATTERN = NAME_PATTERN;

/** DNS object of configs and results (spec "dns"). */
export const dnsSchema = {
  type: 'object',
  properties: {
    nameservers: { type: 'array', items: { type: 'string', maxLength: 64 } },
    domain: { type: 'string', maxLength: 253 },
    search: { type: 'array', items: { type: 'string', maxLength: 253 } },
    options: { type: 'array', items: { type: 'string', maxLength: 256 } },
  },
} as const;

/** The keys every network configuration has (spec "Network configuration format"). */
export const netConfProperties = {
  cniVersion: { type: 'string', pattern: CNI_VERSION_PATTERN },
  name: { type: 'string', minLength: 1, maxLength: 255, pattern: NAME_PATTERN },
  type: { type: 'string', minLength: 1, maxLength: 255, pattern: PLUGIN_TYPE_PATTERN },
  dns: dnsSchema,
  // prevResult is converted by the skeleton (lib/cni/result-parse.ts), which names bad fields itself.
  prevResult: { type: 'object' },
  runtimeConfig: { type: 'object' },
  args: { type: 'object' },
  capabilities: { type: 'object' },
} as const;

/** An `ipam` section: only `type` is ours to check; the rest belongs to the IPAM plugin's schema. */
export const ipamRefSchema = {
  type: 'object',
  required: ['type'],
  properties: { type: netConfProperties.type },
} as const;

/** Required keys of every network configuration. */
export const netConfRequired = ['cniVersion', 'name', 'type'] as const;

/** GC (spec 1.1): `cni.dev/valid-attachments`, the attachments still alive on this network. */
export const validAttachmentsSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['containerID', 'ifname'],
    properties: { containerID: { type: 'string', minLength: 1, maxLength: 256 }, ifname: { type: 'string', minLength: 1, maxLength: 15 } },
  },
} as const;

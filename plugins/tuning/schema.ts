// JSON Schema of the tuning plugin's config: the reference tuning's keys (compiled by scripts/gen-validators.ts).
import { netConfProperties, netConfRequired, validAttachmentsSchema } from '../../lib/cni/schema-common.ts';

const sysctlMap = { type: 'object', maxProperties: 256, additionalProperties: { type: 'string', maxLength: 4096 } } as const;
const mac = { type: 'string', maxLength: 64 } as const;
const mtu = { type: 'integer', minimum: 0, maximum: 0x7fffffff } as const;
const txQLen = { type: 'integer', minimum: 0, maximum: 0xffffffff } as const;

/** Tuning config schema (gen/validators/tuning.js). */
export const tuningSchema = {
  type: 'object',
  required: [...netConfRequired],
  properties: {
    ...netConfProperties,
    sysctl: sysctlMap,
    mac,
    promisc: { type: 'boolean' },
    mtu,
    allmulti: { type: 'boolean' },
    txQLen,
    dataDir: { type: 'string', maxLength: 1024 },
    runtimeConfig: { type: 'object', properties: { mac } },
    args: {
      type: 'object',
      properties: {
        cni: {
          type: 'object',
          properties: { sysctl: sysctlMap, mac, promisc: { type: 'boolean' }, mtu, allmulti: { type: 'boolean' }, txQLen },
        },
      },
    },
    'cni.dev/valid-attachments': validAttachmentsSchema,
  },
  additionalProperties: true,
} as const;

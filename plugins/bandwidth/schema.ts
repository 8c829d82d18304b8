// JSON Schema of the bandwidth plugin's config: the reference's keys (top level and
// runtimeConfig.bandwidth, kubelet's pod annotations) after decode.ts folded their case.
import { netConfProperties, netConfRequired, validAttachmentsSchema } from '../../lib/cni/schema-common.ts';

// Go decodes these into uint64: negative or fractional numbers are refused, null leaves them 0.
const count = { type: ['integer', 'null'], minimum: 0, maximum: 2 ** 64 - 1 } as const;
const subnets = { type: ['array', 'null'], maxItems: 1024, items: { type: 'string', maxLength: 64 } } as const;

/** One BandwidthEntry (CNI CONVENTIONS "bandwidth" capability). */
export const bandwidthEntryProperties = {
  ingressRate: count,
  ingressBurst: count,
  egressRate: count,
  egressBurst: count,
  unshapedSubnets: subnets,
  shapedSubnets: subnets,
} as const;

/** Bandwidth config schema (compiled to gen/validators/bandwidth.js by scripts/gen-validators.ts). */
export const bandwidthSchema = {
  type: 'object',
  required: [...netConfRequired],
  properties: {
    ...netConfProperties,
    ...bandwidthEntryProperties,
    runtimeConfig: {
      type: 'object',
      properties: { bandwidth: { type: ['object', 'null'], properties: bandwidthEntryProperties } },
    },
    'cni.dev/valid-attachments': validAttachmentsSchema,
  },
  additionalProperties: true,
} as const;

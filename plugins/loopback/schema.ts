// JSON Schema of the loopback plugin's config: the spec's common keys; anything else is allowed and ignored.
import { netConfProperties, netConfRequired } from '../../lib/cni/schema-common.ts';

/** Loopback config schema (compiled to gen/validators/loopback.js by scripts/gen-validators.ts). */
export const loopbackSchema = {
  type: 'object',
  required: [...netConfRequired],
  properties: { ...netConfProperties },
  additionalProperties: true,
} as const;

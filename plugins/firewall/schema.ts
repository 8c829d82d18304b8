// JSON Schema of the firewall plugin's config: the reference firewall's keys (compiled by scripts/gen-validators.ts).
import { netConfProperties, netConfRequired, validAttachmentsSchema } from '../../lib/cni/schema-common.ts';

/** Firewall config schema (gen/validators/firewall.js). */
export const firewallSchema = {
  type: 'object',
  required: [...netConfRequired],
  properties: {
    ...netConfProperties,
    // Any string, as the reference (an unknown value falls back to its default backend); config.ts documents the mapping.
    backend: { type: 'string', maxLength: 64 },
    iptablesAdminChainName: { type: 'string', maxLength: 64 },
    firewalldZone: { type: 'string', maxLength: 64 },
    ingressPolicy: { type: 'string', maxLength: 64 },
    'cni.dev/valid-attachments': validAttachmentsSchema,
  },
  additionalProperties: true,
} as const;

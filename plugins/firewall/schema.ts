// JSON Schema of the firewall plugin's config: the reference firewall's keys (compiled by scripts/gen-validators.ts).
import { netConfProperties, netConfRequired } from '../../lib/cni/schema-common.ts';

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
    // GC (spec 1.1): the attachments that are still alive on this network.
    'cni.dev/valid-attachments': {
      type: 'array',
      items: {
        type: 'object',
        required: ['containerID', 'ifname'],
        properties: { containerID: { type: 'string', minLength: 1, maxLength: 256 }, ifname: { type: 'string', minLength: 1, maxLength: 15 } },
      },
    },
  },
  additionalProperties: true,
} as const;

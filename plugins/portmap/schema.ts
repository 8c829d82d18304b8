// JSON Schema of the portmap plugin's config: the reference portmap's keys plus the portMappings capability.
import { netConfProperties, netConfRequired, validAttachmentsSchema } from '../../lib/cni/schema-common.ts';

const port = { type: 'integer', minimum: 1, maximum: 65535 } as const;

/** One runtimeConfig.portMappings entry as kubelet/podman send it (CNI conventions, "portMappings"). */
export const portMappingSchema = {
  type: 'object',
  required: ['hostPort', 'containerPort'],
  properties: {
    hostPort: port,
    containerPort: port,
    // Runtimes send lower case; config.ts lowercases and checks the value against tcp/udp/sctp.
    protocol: { type: 'string', maxLength: 8 },
    // An address, or '' for "every local address"; config.ts parses it.
    hostIP: { type: 'string', maxLength: 64 },
  },
} as const;

/** Portmap config schema (compiled to gen/validators/portmap.js by scripts/gen-validators.ts). */
export const portmapSchema = {
  type: 'object',
  required: [...netConfRequired],
  properties: {
    ...netConfProperties,
    snat: { type: 'boolean' },
    masqAll: { type: 'boolean' },
    // Reference keys of its iptables design: accepted with the reference's types and ranges, and
    // without effect here (docs/portmap.md says why for each).
    markMasqBit: { type: 'integer', minimum: 0, maximum: 31 },
    externalSetMarkChain: { type: 'string' },
    conditionsV4: { type: 'array', items: { type: 'string' } },
    conditionsV6: { type: 'array', items: { type: 'string' } },
    // The reference's iptables/nftables switch (newer releases); weft is nftables only.
    backend: { type: 'string' },
    runtimeConfig: {
      type: 'object',
      properties: { portMappings: { type: 'array', maxItems: 4096, items: portMappingSchema } },
    },
    'cni.dev/valid-attachments': validAttachmentsSchema,
  },
  additionalProperties: true,
} as const;

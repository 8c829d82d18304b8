// JSON Schema of the bridge plugin's config: the reference bridge's keys (reference-notes.md), shape-checked
// only; config.ts applies the cross-field rules (hairpin vs promisc, isDefaultGateway implies isGateway).
import { dnsSchema, ipamRefSchema, netConfProperties, netConfRequired } from '../../lib/cni/schema-common.ts';

// IFNAMSIZ-1 bytes (linux/if.h); the charset is re-checked by validateIfName in config.ts.
const ifName = { type: 'string', minLength: 1, maxLength: 15 } as const;
const mac = { type: 'string', pattern: '^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$' } as const;

/** Bridge config schema (compiled to gen/validators/bridge.js by scripts/gen-validators.ts). */
export const bridgeSchema = {
  type: 'object',
  required: [...netConfRequired],
  properties: {
    ...netConfProperties,
    bridge: ifName,
    isGateway: { type: 'boolean' },
    isDefaultGateway: { type: 'boolean' },
    forceAddress: { type: 'boolean' },
    ipMasq: { type: 'boolean' },
    ipMasqBackend: { type: 'string', maxLength: 32 },
    // 68 is the IPv4 minimum (RFC 791); the kernel caps it per device (max_mtu), checked at ADD.
    mtu: { type: 'integer', minimum: 0, maximum: 65535 },
    hairpinMode: { type: 'boolean' },
    promiscMode: { type: 'boolean' },
    enabledad: { type: 'boolean' },
    macspoofchk: { type: 'boolean' },
    // 802.1Q VLAN IDs 1..4094 (0 means untagged, as in the reference).
    vlan: { type: 'integer', minimum: 0, maximum: 4094 },
    vlanTrunk: { type: 'array' },
    preserveDefaultVlan: { type: 'boolean' },
    disableContainerInterface: { type: 'boolean' },
    portIsolation: { type: 'boolean' },
    // weft's own: destinations the bridge never masquerades to (the flannel plugins put the cluster Network here).
    weftMasqExempt: { type: 'array', maxItems: 64, items: { type: 'string', minLength: 1, maxLength: 64 } },
    ipam: ipamRefSchema,
    dns: dnsSchema,
    runtimeConfig: { type: 'object', properties: { mac } },
    args: { type: 'object', properties: { cni: { type: 'object', properties: { mac } } } },
    // GC (spec 1.1): the attachments still alive on this network (gc.ts reads them).
    'cni.dev/valid-attachments': {
      type: 'array',
      items: { type: 'object', properties: { containerID: { type: 'string' }, ifname: { type: 'string' } } },
    },
  },
  additionalProperties: true,
} as const;

// JSON Schema of the configuration host-local reads: the calling plugin's whole network config, of
// which we check the common keys, `ipam` (reference keys), runtimeConfig.ipRanges/ips, args.cni.ips
// and GC's cni.dev/valid-attachments. Unknown keys are allowed, as the reference ignores them.
// Addresses are only shape-checked here; config.ts parses them and names the bad field and value.
import { netConfProperties } from '../../lib/cni/schema-common.ts';

const ipText = { type: 'string', minLength: 2, maxLength: 64 } as const;
const cidrText = { type: 'string', minLength: 4, maxLength: 68 } as const;
// runtimeConfig.ips and args.cni.ips: an address, or an address with a prefix length.
const addrText = { type: 'string', minLength: 2, maxLength: 68 } as const;

const rangeSchema = {
  type: 'object',
  required: ['subnet'],
  properties: { subnet: cidrText, rangeStart: ipText, rangeEnd: ipText, gateway: ipText },
} as const;

const rangeSetsSchema = {
  type: 'array',
  maxItems: 64,
  items: { type: 'array', maxItems: 256, items: rangeSchema },
} as const;

const routeSchema = {
  type: 'object',
  required: ['dst'],
  properties: { dst: cidrText, gw: ipText },
} as const;

/** The `ipam` section: reference host-local keys (legacy single range included). */
const ipamSchema = {
  type: 'object',
  required: ['type'],
  properties: {
    type: netConfProperties.type,
    ranges: rangeSetsSchema,
    subnet: cidrText,
    rangeStart: ipText,
    rangeEnd: ipText,
    gateway: ipText,
    routes: { type: 'array', maxItems: 1024, items: routeSchema },
    dataDir: { type: 'string', minLength: 1, maxLength: 4096 },
    resolvConf: { type: 'string', maxLength: 4096 },
  },
} as const;

const attachmentSchema = {
  type: 'object',
  required: ['containerID', 'ifname'],
  properties: { containerID: { type: 'string', maxLength: 1024 }, ifname: { type: 'string', maxLength: 64 } },
} as const;

/**
 * host-local config schema (compiled to gen/validators/host-local.js by scripts/gen-validators.ts).
 * Only the keys the reference host-local decodes: its config struct has no top-level type, dns,
 * capabilities or prevResult, so those are ignored here as there, whatever their JSON type.
 */
export const hostLocalSchema = {
  type: 'object',
  required: ['cniVersion', 'name', 'ipam'],
  properties: {
    cniVersion: netConfProperties.cniVersion,
    name: netConfProperties.name,
    ipam: ipamSchema,
    runtimeConfig: {
      type: 'object',
      properties: {
        ipRanges: rangeSetsSchema,
        ips: { type: 'array', maxItems: 64, items: addrText },
      },
    },
    args: {
      type: 'object',
      properties: {
        cni: {
          type: 'object',
          properties: { ips: { type: 'array', maxItems: 64, items: addrText } },
        },
      },
    },
    'cni.dev/valid-attachments': { type: 'array', items: attachmentSchema },
  },
} as const;

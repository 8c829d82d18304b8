// The plugins under fuzz: one entry each (a later plugin plugs in with one line in FUZZ_TARGETS).
// An entry says how to load the plugin object (worker only), which schema and validator judge its
// config, and how to build one valid config and env for a node namespace made by the test.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Plugin } from '../../lib/cni/plugin.ts';
import type { GeneratedValidator } from '../../lib/cni/validate.ts';
import { schemas } from '../../scripts/schemas.ts';
import type { SchemaNode } from './schema-mutate.ts';

/** Where a case runs: paths and names made by the test. */
export interface FuzzContext {
  /** host-local dataDir (a temp dir). */
  dataDir: string;
  /** Path of a pod namespace made by the test (CNI_NETNS of valid cases). */
  podNetns: string;
  /** Subnet octet unique to the target, so targets never share addresses. */
  octet: number;
  /** A temp dir of the target's own (subnet.env, flannel's dataDir). */
  scratch: string;
}

/** One plugin under fuzz. */
export interface FuzzTarget {
  /** Executable name under dist/bin/. */
  name: string;
  /** Name of its entry in scripts/schemas.ts (and gen/validators/<schema>.js), or a hand-written schema
   * for plugins without a generated validator (their mutations then expect success or 2/7/11, never 999). */
  schema: string | SchemaNode;
  /** Loads the plugin object (runs in the worker, inside a node netns). */
  load(): Promise<Plugin>;
  /** A valid config (what a runtime would send on ADD). */
  baseConfig(ctx: FuzzContext): Record<string, unknown>;
  /** True when ADD opens CNI_NETNS (host-local and portmap never do). */
  opensNetns: boolean;
  /** Plugin-specific (100+) codes a schema-valid but semantically odd config may produce. */
  extraCodes?: readonly number[];
  /** Codes DEL may still answer with a mutated config (100: its IPAM plugin is not on CNI_PATH). */
  delCodes?: readonly number[];
  /**
   * False when a mutated config could make the plugin write outside the test's temp dirs (e.g. an
   * `ipam` without our dataDir falls back to /var/lib/cni/networks on the real filesystem, which
   * network namespaces do not isolate); such mutations are drawn again.
   */
  confined?(config: unknown, ctx: FuzzContext): boolean;
  /** Writes what a valid ADD needs in ctx.scratch (e.g. subnet.env); runs in the test runner. */
  prepare?(ctx: FuzzContext): void;
}

/** True unless `config.ipam` is an object whose dataDir is not ours (the default would be the host's). */
function ipamConfined(config: unknown, ctx: FuzzContext): boolean {
  const ipam = (config as { ipam?: unknown } | null)?.ipam;
  if (typeof ipam !== 'object' || ipam === null || Array.isArray(ipam)) return true;
  return (ipam as { dataDir?: unknown }).dataDir === ctx.dataDir;
}

function hostLocalIpam(ctx: FuzzContext): Record<string, unknown> {
  return {
    type: 'host-local',
    ranges: [[{ subnet: `10.${ctx.octet}.0.0/24` }], [{ subnet: `fd00:${ctx.octet}::/120` }]],
    routes: [{ dst: '0.0.0.0/0' }],
    dataDir: ctx.dataDir,
  };
}

// The flannel plugins' keys (lib/flannel-cni/config.ts validates them by hand; no generated validator).
const flannelSchema: SchemaNode = {
  type: 'object',
  required: ['cniVersion', 'name', 'type'],
  properties: {
    cniVersion: { type: 'string' }, name: { type: 'string', maxLength: 255 }, type: { type: 'string', maxLength: 255 },
    subnetFile: { type: 'string' }, dataDir: { type: 'string' },
    delegate: {
      type: 'object',
      properties: {
        type: { type: 'string', maxLength: 255 }, bridge: { type: 'string', maxLength: 15 }, mtu: { type: 'integer', minimum: 0, maximum: 65535 },
        isGateway: { type: 'boolean' }, ipMasq: { type: 'boolean' }, hairpinMode: { type: 'boolean' },
      },
    },
    ipam: { type: 'object', properties: { dataDir: { type: 'string' }, routes: { type: 'array', items: { type: 'object', properties: { dst: { type: 'string' }, gw: { type: 'string' } } } } } },
    runtimeConfig: { type: 'object' }, args: { type: 'object' },
  },
};

function flannelConfig(type: string, ctx: FuzzContext): Record<string, unknown> {
  return {
    cniVersion: '1.0.0', name: `fuzz-${type}`, type, subnetFile: join(ctx.scratch, 'subnet.env'), dataDir: join(ctx.scratch, 'flannel'),
    delegate: { bridge: `fzfl${ctx.octet}` }, ipam: { dataDir: ctx.dataDir },
  };
}

function writeSubnetEnv(ctx: FuzzContext): void {
  writeFileSync(join(ctx.scratch, 'subnet.env'), `FLANNEL_NETWORK=10.${ctx.octet}.0.0/16\nFLANNEL_SUBNET=10.${ctx.octet}.5.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=false\n`);
}

/** Our subnet file and data dirs only (flannel's defaults are /run/flannel and /var/lib/cni on the host). */
function flannelConfined(config: unknown, ctx: FuzzContext): boolean {
  const c = config as Record<string, unknown> | null;
  if (typeof c !== 'object' || c === null || Array.isArray(c)) return true;
  const ipam = c['ipam'] as Record<string, unknown> | undefined;
  return c['subnetFile'] === join(ctx.scratch, 'subnet.env') && c['dataDir'] === join(ctx.scratch, 'flannel') &&
    typeof ipam === 'object' && ipam !== null && ipam['dataDir'] === ctx.dataDir;
}

/** Registers the in-process delegates as the plugin's main.ts does (host-local; bridge for the flannel plugins). */
async function registerLikeMain(withBridge: boolean): Promise<void> {
  const { registerInProcess } = await import('../../lib/cni/delegate.ts');
  registerInProcess('host-local', (await import('../../ipam/host-local/plugin.ts')).hostLocalPlugin);
  if (withBridge) registerInProcess('bridge', (await import('../../plugins/bridge/plugin.ts')).bridgePlugin);
}

/** The registry. */
export const FUZZ_TARGETS: readonly FuzzTarget[] = [
  {
    name: 'loopback', schema: 'loopback', opensNetns: true,
    load: async () => (await import('../../plugins/loopback/plugin.ts')).loopbackPlugin,
    baseConfig: () => ({ cniVersion: '1.0.0', name: 'fuzz-lo', type: 'loopback' }),
  },
  {
    name: 'host-local', schema: 'host-local', opensNetns: false, confined: ipamConfined,
    load: async () => (await import('../../ipam/host-local/plugin.ts')).hostLocalPlugin,
    baseConfig: (ctx) => ({ cniVersion: '1.0.0', name: 'fuzz-hl', type: 'bridge', ipam: hostLocalIpam(ctx) }),
  },
  {
    name: 'bridge', schema: 'bridge', opensNetns: true, confined: ipamConfined,
    // 100: the IPAM type names no plugin on CNI_PATH; 110: a name or address taken by something else.
    extraCodes: [100, 110],
    delCodes: [100],
    load: async () => { await registerLikeMain(false); return (await import('../../plugins/bridge/plugin.ts')).bridgePlugin; },
    baseConfig: (ctx) => ({
      cniVersion: '1.0.0', name: 'fuzz-br', type: 'bridge', bridge: 'fuzzbr0', isGateway: true, ipMasq: true,
      ipam: hostLocalIpam(ctx),
    }),
  },
  {
    name: 'portmap', schema: 'portmap', opensNetns: false,
    // 120: hostPort taken; 122: prevResult holds no container address to map to.
    extraCodes: [120, 122],
    load: async () => (await import('../../plugins/portmap/plugin.ts')).portmapPlugin,
    baseConfig: (ctx) => ({
      cniVersion: '1.0.0', name: 'fuzz-pm', type: 'portmap', snat: true,
      runtimeConfig: { portMappings: [{ hostPort: 8080 + ctx.octet, containerPort: 80, protocol: 'tcp' }] },
      prevResult: {
        cniVersion: '1.0.0',
        interfaces: [{ name: 'eth0', mac: '02:00:00:00:00:01', sandbox: ctx.podNetns }],
        ips: [{ address: `10.${ctx.octet}.0.2/24`, gateway: `10.${ctx.octet}.0.1`, interface: 0 }],
      },
    }),
  },
  {
    name: 'firewall', schema: 'firewall', opensNetns: false,
    // 131: same-bridge/isolated with a prevResult whose first interface is not a usable bridge name.
    extraCodes: [131],
    load: async () => (await import('../../plugins/firewall/plugin.ts')).firewallPlugin,
    baseConfig: (ctx) => ({
      cniVersion: '1.0.0', name: 'fuzz-fw', type: 'firewall', backend: 'iptables',
      prevResult: {
        cniVersion: '1.0.0',
        interfaces: [{ name: `fzfw${ctx.octet}`, mac: '02:00:00:00:00:02' }, { name: 'eth0', mac: '02:00:00:00:00:01', sandbox: ctx.podNetns }],
        ips: [{ address: `10.${ctx.octet}.0.2/24`, gateway: `10.${ctx.octet}.0.1`, interface: 1 }],
      },
    }),
  },
  {
    name: 'tuning', schema: 'tuning', opensNetns: true,
    // 140/141: CHECK mismatch, no such interface in the pod (the fuzz pod has only lo).
    extraCodes: [140, 141],
    // The default dataDir is /run/cni/tuning on the host: only cases keeping ours run.
    confined: (config, ctx) => (config as { dataDir?: unknown } | null)?.dataDir === join(ctx.scratch, 'tuning'),
    load: async () => (await import('../../plugins/tuning/plugin.ts')).tuningPlugin,
    baseConfig: (ctx) => ({
      cniVersion: '1.0.0', name: 'fuzz-tn', type: 'tuning', dataDir: join(ctx.scratch, 'tuning'), sysctl: { 'net.ipv4.conf.all.arp_notify': '1' },
      prevResult: { cniVersion: '1.0.0', interfaces: [{ name: 'eth0', mac: '02:00:00:00:00:01', sandbox: ctx.podNetns }], ips: [] },
    }),
  },
  {
    name: 'flannel-vxlan', schema: flannelSchema, opensNetns: true, extraCodes: [100, 110], delCodes: [], confined: flannelConfined, prepare: writeSubnetEnv,
    load: async () => { await registerLikeMain(true); return (await import('../../plugins/flannel-vxlan/plugin.ts')).flannelVxlanPlugin; },
    baseConfig: (ctx) => flannelConfig('flannel-vxlan', ctx),
  },
  {
    name: 'flannel', schema: flannelSchema, opensNetns: true, extraCodes: [100, 110], delCodes: [], confined: flannelConfined, prepare: writeSubnetEnv,
    load: async () => { await registerLikeMain(true); return (await import('../../plugins/flannel/plugin.ts')).flannelPlugin; },
    baseConfig: (ctx) => flannelConfig('flannel', ctx),
  },
  {
    name: 'host-gw', schema: flannelSchema, opensNetns: true, extraCodes: [100, 110], delCodes: [], confined: flannelConfined, prepare: writeSubnetEnv,
    load: async () => { await registerLikeMain(true); return (await import('../../plugins/host-gw/plugin.ts')).hostGwPlugin; },
    baseConfig: (ctx) => flannelConfig('host-gw', ctx),
  },
];

/** The JSON Schema of `t` (from scripts/schemas.ts). */
export function schemaOf(t: FuzzTarget): SchemaNode {
  if (typeof t.schema !== 'string') return t.schema;
  const e = schemas.find((s) => s.name === t.schema);
  if (e === undefined) throw new Error(`no schema named ${t.schema} in scripts/schemas.ts`);
  return e.schema as SchemaNode;
}

/** The build-time generated validator of `t` (needs `npm run build` or scripts/gen-validators.ts). */
export async function validatorOf(t: FuzzTarget): Promise<GeneratedValidator> {
  if (typeof t.schema !== 'string') return () => true; // hand-validated: the oracle allows success or 2/7/11
  const mod = (await import(`../../gen/validators/${t.schema}.js`)) as { validate: GeneratedValidator };
  return mod.validate;
}

/** Targets selected by FUZZ_PLUGINS (comma list), default all. */
export function selectedTargets(env: NodeJS.ProcessEnv = process.env): FuzzTarget[] {
  const want = (env['FUZZ_PLUGINS'] ?? '').split(',').filter((s) => s !== '');
  return FUZZ_TARGETS.filter((t) => want.length === 0 || want.includes(t.name));
}

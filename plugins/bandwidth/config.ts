// Bandwidth configuration: stdin -> typed BandwidthConfig. Keys decoded as Go does (lib/cni/decode.ts,
// inside validateConfig), the schema (code 7 naming the field), then the reference's rules: the
// top-level entry wins over runtimeConfig.bandwidth, rate and burst come in pairs, un/shapedSubnets
// exclude each other.
import { invalidConfig } from '../../lib/cni/errors.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { fieldFor } from '../../lib/cni/decode.ts';
import type { NetConf } from '../../lib/cni/types.ts';
import { validateConfig } from '../../lib/cni/validate.ts';
import { canonicalCidr, parseCidr, type Cidr } from '../../lib/ip/cidr.ts';
import { validate } from '../../gen/validators/bandwidth.js';

/** One direction's limit: bits per second and bucket size in bits, as the config gives them. */
export interface Limit {
  rate: bigint;
  burst: bigint;
}

/** The normalised config every verb works from. */
export interface BandwidthConfig {
  name: string;
  cniVersion: string;
  /** Traffic into the pod (shaped on the host veth); null: unlimited. */
  ingress: Limit | null;
  /** Traffic out of the pod (shaped on the ifb device); null: unlimited. */
  egress: Limit | null;
  /** Peer subnets: with `exclude`, these go unshaped; otherwise only these are shaped. Empty: shape everything. */
  subnets: Cidr[];
  exclude: boolean;
  /** GC only: cni.dev/valid-attachments (spec 1.1); null when absent. */
  validAttachments: Array<{ containerId: string; ifName: string }> | null;
}

interface Entry {
  ingressRate?: number | null;
  ingressBurst?: number | null;
  egressRate?: number | null;
  egressBurst?: number | null;
  unshapedSubnets?: string[] | null;
  shapedSubnets?: string[] | null;
}

interface BandwidthNetConf extends NetConf, Entry {
  runtimeConfig?: { bandwidth?: Entry | null };
  'cni.dev/valid-attachments'?: Array<{ containerID: string; ifname: string }>;
}

const ENTRY_KEYS = ['ingressRate', 'ingressBurst', 'egressRate', 'egressBurst', 'unshapedSubnets', 'shapedSubnets'] as const;
/** The reference refuses bursts of 4 GiB (2^32 - 1 bytes) and more: the kernel's tbf fields are u32 bytes. */
const MAX_BURST_BYTES = 0xffffffffn;
/** Below 8 bit/s the rate is 0 bytes/s, which the kernel refuses (the reference fails with EINVAL at ADD). */
const MIN_RATE = 8n;

/** Decodes and checks the config: code 7 naming the bad value. Also valid for DEL's lenient path (see del.ts). */
export function parseBandwidthConfig(a: Pick<CmdArgs, 'config' | 'cniVersion'>): BandwidthConfig {
  const c = validateConfig<BandwidthNetConf>(validate, a.config);
  const e = hasTopLevelEntry(a.config) ? c : (c.runtimeConfig?.bandwidth ?? {});
  const ingress = parseLimit(e, 'ingress');
  const egress = parseLimit(e, 'egress');
  const unshaped = e.unshapedSubnets ?? [];
  const shaped = e.shapedSubnets ?? [];
  if (unshaped.length > 0 && shaped.length > 0) {
    throw invalidConfig('unshapedSubnets and shapedSubnets cannot be both specified, one of them should be discarded');
  }
  const exclude = unshaped.length > 0;
  return {
    name: c.name,
    cniVersion: a.cniVersion,
    ingress,
    egress,
    // The reference checks subnets only when something is shaped; so do we, to accept what it accepts.
    subnets: ingress === null && egress === null ? [] : (exclude ? unshaped : shaped).map(parseSubnet),
    exclude,
    validAttachments: c['cni.dev/valid-attachments']?.map((v) => ({ containerId: v.containerID, ifName: v.ifname })) ?? null,
  };
}

/**
 * Whether the raw config names any key of the top-level entry (in any case, even with null): Go
 * allocates the embedded *BandwidthEntry then, and the reference ignores runtimeConfig.bandwidth.
 * Read before decoding, which drops nulls as Go leaves null fields unset.
 */
export function hasTopLevelEntry(raw: unknown): boolean {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return false;
  const fields = validate.fields.p ?? {};
  return Object.keys(raw).some((k) => (ENTRY_KEYS as readonly string[]).includes(fieldFor(fields, k) ?? ''));
}

function parseLimit(e: Entry, dir: 'ingress' | 'egress'): Limit | null {
  const rate = BigInt(e[`${dir}Rate`] ?? 0);
  const burst = BigInt(e[`${dir}Burst`] ?? 0);
  if (rate === 0n && burst === 0n) return null;
  if (burst === 0n) throw invalidConfig('if rate is set, burst must also be set', `${dir}Rate ${rate}, ${dir}Burst 0`);
  if (rate === 0n) throw invalidConfig('if burst is set, rate must also be set', `${dir}Burst ${burst}, ${dir}Rate 0`);
  if (burst / 8n >= MAX_BURST_BYTES) throw invalidConfig('burst cannot be more than 4GB', `${dir}Burst ${burst} bits`);
  if (rate < MIN_RATE) throw invalidConfig(`${dir}Rate must be at least 8 bits per second`, `${dir}Rate ${rate}`);
  return { rate, burst };
}

function parseSubnet(s: string): Cidr {
  const c = parseCidr(s.trim() === s ? s : '');
  if (c === null) throw invalidConfig(`bad subnet ${JSON.stringify(s)} provided`, 'expected an IPv4 or IPv6 CIDR such as 10.0.0.0/8');
  return canonicalCidr(c);
}

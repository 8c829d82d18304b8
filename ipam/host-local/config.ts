// host-local configuration: stdin config + CNI_ARGS -> typed, normalised config. Schema first (code 7
// naming the field), then the reference's semantics: range-set order, defaults, overlap checks,
// requested addresses from CNI_ARGS IP=, args.cni.ips and runtimeConfig.ips.
import { parseCniArgs } from '../../lib/cni/args.ts';
import { invalidConfig, invalidEnv } from '../../lib/cni/errors.ts';
import { validateNetworkName } from '../../lib/cni/ids.ts';
import type { Route } from '../../lib/cni/types.ts';
import { validateConfig } from '../../lib/cni/validate.ts';
import { versionAtLeast } from '../../lib/cni/version.ts';
import type { Cidr, IpAddr } from '../../lib/ip/index.ts';
import { formatCidr, formatIp, isMapped, normalizeIp, parseCidr, parseIp } from '../../lib/ip/index.ts';
import { validate } from '../../gen/validators/host-local.js';
import { DEFAULT_DATA_DIR } from '../../lib/attach/host-local-files.ts';
import type { RangeInput, RangeSet } from './range.ts';
import { RangeConfigError, normalizeRange, rangeSetsOverlap, validateRangeSet } from './range.ts';
import type { Attachment } from './allocator.ts';

/** A range as JSON (reference keys). */
export interface RangeJson {
  subnet: string;
  rangeStart?: string;
  rangeEnd?: string;
  gateway?: string;
}

/** The raw config shape the schema guarantees (only what host-local reads). */
export interface HostLocalNetConf {
  cniVersion: string;
  name: string;
  type: string;
  ipam: {
    type: string;
    ranges?: RangeJson[][];
    subnet?: string;
    rangeStart?: string;
    rangeEnd?: string;
    gateway?: string;
    routes?: Array<{ dst: string; gw?: string }>;
    dataDir?: string;
    resolvConf?: string;
  };
  runtimeConfig?: { ipRanges?: RangeJson[][]; ips?: string[] };
  args?: { cni?: { ips?: string[] } };
  'cni.dev/valid-attachments'?: Array<{ containerID: string; ifname: string }>;
}

/** The normalised config every verb works from. */
export interface HostLocalConfig {
  name: string;
  cniVersion: string;
  /** Directory holding <name>/ (default /var/lib/cni/networks, as the reference). */
  dataDir: string;
  /** resolv.conf-format file whose settings fill the result's dns, or null. */
  resolvConf: string | null;
  /** ipam.routes, normalised to result form. */
  routes: Route[];
  /** runtimeConfig.ipRanges, then the legacy single range, then ipam.ranges (reference order). */
  rangeSets: RangeSet[];
  /** Requested addresses: CNI_ARGS IP=, then args.cni.ips, then runtimeConfig.ips. */
  requestedIps: IpAddr[];
  /** GC only: cni.dev/valid-attachments (spec 1.1), null when absent. */
  validAttachments: Attachment[] | null;
}

function bad(field: string, value: unknown, why: string): never {
  throw invalidConfig(`invalid configuration: ${field} ${why}`, `${field} = ${JSON.stringify(value)}`);
}

/** An address field: parsed and unmapped (::ffff:a.b.c.d becomes a.b.c.d, like the reference). */
function addrField(field: string, s: string): IpAddr {
  const a = parseIp(s);
  if (a === null) bad(field, s, 'is not an IP address');
  return normalizeIp(a);
}

/** An "address or address/prefix" field (runtimeConfig.ips, args.cni.ips): the address part. */
function addrOrCidrField(field: string, s: string): IpAddr {
  const c = s.includes('/') ? parseCidr(s) : null;
  if (s.includes('/') && c === null) bad(field, s, 'is not an IP address or CIDR');
  return c ? normalizeIp(c.addr) : addrField(field, s);
}

function subnetField(field: string, s: string): Cidr {
  const c = parseCidr(s);
  if (c === null) bad(field, s, 'is not a CIDR');
  // Go's canonicalizeIP turns the address of an IPv4-mapped subnet into IPv4 while its mask stays
  // 128 bits, and the reference then fails ("IPNet IP and Mask version mismatch"); we say why.
  if (isMapped(c.addr)) bad(field, s, 'is an IPv4-mapped IPv6 subnet; write the IPv4 subnet instead');
  return c;
}

function rangeField(f: string, r: RangeJson): ReturnType<typeof normalizeRange> {
  const input: RangeInput = { subnet: subnetField(`${f}.subnet`, r.subnet) };
  if (r.rangeStart !== undefined) input.rangeStart = addrField(`${f}.rangeStart`, r.rangeStart);
  if (r.rangeEnd !== undefined) input.rangeEnd = addrField(`${f}.rangeEnd`, r.rangeEnd);
  if (r.gateway !== undefined) input.gateway = addrField(`${f}.gateway`, r.gateway);
  return rangeOrFail(f, r, input);
}

function rangeSetsField(field: string, sets: readonly RangeJson[][]): RangeSet[] {
  return sets.map((set, i) => set.map((r, j) => rangeField(`${field}[${i}][${j}]`, r)));
}

function rangeOrFail(field: string, raw: RangeJson, input: RangeInput): ReturnType<typeof normalizeRange> {
  try {
    return normalizeRange(input);
  } catch (e) {
    if (e instanceof RangeConfigError) bad(field, raw, e.message);
    throw e;
  }
}

/** Routes in result form; a mapped dst prints as IPv4 with its prefix less 96, as Go's IPNet does. */
function routesField(routes: ReadonlyArray<{ dst: string; gw?: string }>): Route[] {
  return routes.map((r, i) => {
    const c = parseCidr(r.dst);
    if (c === null) bad(`ipam.routes[${i}].dst`, r.dst, 'is not a CIDR');
    const dst = isMapped(c.addr) && c.prefix >= 96 ? formatCidr({ addr: normalizeIp(c.addr), prefix: c.prefix - 96 }) : formatCidr(c);
    const out: Route = { dst };
    if (r.gw !== undefined) out.gw = formatIp(addrField(`ipam.routes[${i}].gw`, r.gw));
    return out;
  });
}

function requestedIps(conf: HostLocalNetConf, cniArgs: string): IpAddr[] {
  const out: IpAddr[] = [];
  const args = parseCniArgs(cniArgs, { known: ['IP'] });
  const ipArg = args['IP'];
  if (ipArg !== undefined && ipArg !== '') {
    const a = parseIp(ipArg);
    if (a === null) throw invalidEnv('invalid CNI_ARGS', `IP=${JSON.stringify(ipArg.slice(0, 64))} is not an IP address`);
    out.push(normalizeIp(a));
  }
  (conf.args?.cni?.ips ?? []).forEach((s, i) => out.push(addrOrCidrField(`args.cni.ips[${i}]`, s)));
  (conf.runtimeConfig?.ips ?? []).forEach((s, i) => out.push(addrOrCidrField(`runtimeConfig.ips[${i}]`, s)));
  return out;
}

function checkRangeSets(sets: RangeSet[], cniVersion: string): void {
  if (sets.length === 0) throw invalidConfig('invalid configuration: no IP ranges specified', 'set ipam.ranges or ipam.subnet');
  sets.forEach((set, i) => {
    try {
      validateRangeSet(set);
    } catch (e) {
      if (e instanceof RangeConfigError) throw invalidConfig(`invalid configuration: invalid range set ${i}: ${e.message}`);
      throw e;
    }
  });
  for (let i = 0; i < sets.length; i++) {
    for (let j = i + 1; j < sets.length; j++) {
      if (rangeSetsOverlap(sets[i] ?? [], sets[j] ?? [])) throw invalidConfig(`invalid configuration: range set ${i} overlaps with ${j}`);
    }
  }
  // Spec 0.1.0/0.2.0 results hold at most one address per family (ip4/ip6).
  if (!versionAtLeast(cniVersion, '0.3.0')) {
    const v4 = sets.filter((s) => s[0]?.subnet.addr.family === 4).length;
    if (v4 > 1 || sets.length - v4 > 1) throw invalidConfig(`invalid configuration: CNI version ${cniVersion} does not support more than 1 address per family`);
  }
}

/** Validates and normalises the config; code 7 for config errors, 4 for CNI_ARGS errors. */
export function parseHostLocalConfig(config: unknown, cniArgs = ''): HostLocalConfig {
  const conf = validateConfig<HostLocalNetConf>(validate, config);
  const name = validateNetworkName(conf.name);
  const ipam = conf.ipam;
  const sets = rangeSetsField('runtimeConfig.ipRanges', conf.runtimeConfig?.ipRanges ?? []);
  if (ipam.subnet !== undefined) {
    const legacy: RangeJson = { subnet: ipam.subnet };
    if (ipam.rangeStart !== undefined) legacy.rangeStart = ipam.rangeStart;
    if (ipam.rangeEnd !== undefined) legacy.rangeEnd = ipam.rangeEnd;
    if (ipam.gateway !== undefined) legacy.gateway = ipam.gateway;
    sets.push([rangeField('ipam', legacy)]);
  }
  sets.push(...rangeSetsField('ipam.ranges', ipam.ranges ?? []));
  checkRangeSets(sets, conf.cniVersion);
  // A relative dataDir would land in whatever directory the runtime runs plugins from.
  if (ipam.dataDir !== undefined && !ipam.dataDir.startsWith('/')) bad('ipam.dataDir', ipam.dataDir, 'must be an absolute path');
  const valid = conf['cni.dev/valid-attachments'];
  return {
    name,
    cniVersion: conf.cniVersion,
    dataDir: ipam.dataDir ?? DEFAULT_DATA_DIR,
    resolvConf: ipam.resolvConf ? ipam.resolvConf : null,
    routes: routesField(ipam.routes ?? []),
    rangeSets: sets,
    requestedIps: requestedIps(conf, cniArgs),
    validAttachments: valid ? valid.map((v) => ({ containerId: v.containerID, ifname: v.ifname })) : null,
  };
}

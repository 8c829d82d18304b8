// CNI version comparison and result formatting from the internal (1.1.0) form to any version's wire form.
import { familyOfText } from '../ip/addr.ts';
import { incompatibleVersion } from './errors.ts';
import { parseResult } from './result-parse.ts';
import { CURRENT_VERSION, SUPPORTED_VERSIONS } from './types.ts';
import { parseDigits } from '../text/digits.ts';
import type {
  CniVersion,
  Interface,
  Interface10,
  IpConfig,
  IpConfig02,
  IpConfig04,
  Result,
  Result02,
  Result04,
  Result10,
  Route,
  Route10,
  AnyResult,
} from './types.ts';

export { parseResult };

/** Parse "x.y.z" (1-4 digits each) into numbers; undefined when the string is not a plain semantic version. */
export function parseVersion(v: string): [number, number, number] | undefined {
  const n = v.split('.').map((p) => parseDigits(p, 4));
  if (n.length !== 3 || n.some((x) => x === null)) return undefined;
  return n as [number, number, number];
}

/** Compare two "x.y.z" versions: negative, 0 or positive. Throws code 1 on malformed input. */
export function compareVersions(a: string, b: string): number {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (!pa || !pb) throw incompatibleVersion('malformed CNI version', `"${pa ? b : a}" is not x.y.z`);
  return pa[0] - pb[0] || pa[1] - pb[1] || pa[2] - pb[2];
}

/** True when v >= min (both "x.y.z"). */
export function versionAtLeast(v: string, min: string): boolean {
  return compareVersions(v, min) >= 0;
}

/** True when v is one of SUPPORTED_VERSIONS (optionally restricted to `among`). */
export function isSupportedVersion(v: unknown, among: readonly string[] = SUPPORTED_VERSIONS): v is CniVersion {
  return typeof v === 'string' && among.includes(v) && (SUPPORTED_VERSIONS as readonly string[]).includes(v);
}

/** Address family of an IP or CIDR string as the 0.3.x result's `version` field spells it. */
export function ipFamily(addr: string): '4' | '6' {
  return familyOfText(addr) === 6 ? '6' : '4';
}

/** An internal result in the wire form of `cniVersion`, with cniVersion set first. Throws code 1. */
export function formatResult(result: Result, cniVersion: string): AnyResult {
  if (!isSupportedVersion(cniVersion)) {
    throw incompatibleVersion('cannot format result', `unsupported cniVersion "${cniVersion}"`);
  }
  if (cniVersion === '0.1.0' || cniVersion === '0.2.0') return formatResult02(result, cniVersion);
  if (cniVersion === CURRENT_VERSION) return formatResult11(result);
  const out: Result10 | Result04 = { cniVersion };
  if (result.interfaces) out.interfaces = result.interfaces.map(formatInterface10);
  if (result.ips) {
    out.ips = versionAtLeast(cniVersion, '1.0.0') ? result.ips.map(copyIp) : result.ips.map(formatIp04);
  }
  if (result.routes) out.routes = result.routes.map(formatRoute10);
  if (result.dns) out.dns = copyDns(result.dns);
  return out;
}

function formatResult11(result: Result): Result {
  const out: Result = { cniVersion: CURRENT_VERSION };
  if (result.interfaces) out.interfaces = result.interfaces.map(formatInterface11);
  if (result.ips) out.ips = result.ips.map(copyIp);
  if (result.routes) out.routes = result.routes.map((r) => ({ ...r }));
  if (result.dns) out.dns = copyDns(result.dns);
  return out;
}

function formatInterface11(i: Interface): Interface {
  const out = { ...i } as Partial<Interface>;
  // An empty mac means "none"; the Go reference omits it too (json omitempty).
  if (!out.mac) delete out.mac;
  return out as Interface;
}

function formatInterface10(i: Interface): Interface10 {
  const out: Interface10 = { name: i.name };
  if (i.mac) out.mac = i.mac;
  if (i.sandbox !== undefined) out.sandbox = i.sandbox;
  return out;
}

function copyIp(ip: IpConfig): IpConfig {
  const out: IpConfig = { address: ip.address };
  if (ip.gateway !== undefined) out.gateway = ip.gateway;
  if (ip.interface !== undefined) out.interface = ip.interface;
  return out;
}

function formatIp04(ip: IpConfig): IpConfig04 {
  // 0.3.x/0.4.0 put "version" first in their examples; key order is cosmetic but kept.
  return { version: ipFamily(ip.address), ...copyIp(ip) };
}

function formatRoute10(r: Route): Route10 {
  const out: Route10 = { dst: r.dst };
  if (r.gw !== undefined) out.gw = r.gw;
  return out;
}

function copyDns(d: NonNullable<Result['dns']>): NonNullable<Result['dns']> {
  const out: NonNullable<Result['dns']> = {};
  if (d.nameservers) out.nameservers = [...d.nameservers];
  if (d.domain !== undefined) out.domain = d.domain;
  if (d.search) out.search = [...d.search];
  if (d.options) out.options = [...d.options];
  return out;
}

// 0.1.0/0.2.0 carry one address per family: the first IPv4 and the first IPv6, each with its
// gateway; routes go to the block of their destination's family (dropped if that family has none).
function formatResult02(result: Result, cniVersion: '0.1.0' | '0.2.0'): Result02 {
  const out: Result02 = { cniVersion };
  const blocks: Partial<Record<'4' | '6', IpConfig02>> = {};
  for (const ip of result.ips ?? []) {
    const fam = ipFamily(ip.address);
    if (blocks[fam]) continue;
    const block: IpConfig02 = { ip: ip.address };
    if (ip.gateway !== undefined) block.gateway = ip.gateway;
    blocks[fam] = block;
  }
  for (const r of result.routes ?? []) {
    const block = blocks[ipFamily(r.dst)];
    if (block) (block.routes ??= []).push(formatRoute10(r));
  }
  if (blocks['4']) out.ip4 = blocks['4'];
  if (blocks['6']) out.ip6 = blocks['6'];
  if (result.dns) out.dns = copyDns(result.dns);
  return out;
}

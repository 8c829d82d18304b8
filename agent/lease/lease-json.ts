// flannel's wire formats for leases (pkg/subnet/subnet.go, pkg/lease/lease.go): the key
// "10.244.3.0-24", dual stack "10.244.3.0-24&fd00:10:244:3::-64", and the JSON value
// {"PublicIP":"…","PublicIPv6":"…","BackendType":"vxlan","BackendData":{…},"BackendV6Data":{…}}.
import { canonicalCidr, formatCidr, formatIp, hasHostBits, parseCidr, parseIp } from '../../lib/ip/index.ts';
import { formatCidr4, parseCidr4, parseIPv4 } from '../../lib/ip/ipv4.ts';
import { getKey, isObject } from '../config/net-conf-error.ts';
import type { BackendData } from './store.ts';

/** The node data a lease carries (flannel's LeaseAttrs); the IPv6 fields only on a dual-stack lease. */
export interface LeaseAttrs {
  publicIp: string;
  backendType: string;
  backendData: BackendData;
  publicIpv6?: string;
  backendV6Data?: BackendData;
}

/** The subnets a lease key names. An IPv6-only key, as flannel writes it, has the IPv4 part "0.0.0.0-0". */
export interface LeaseKey {
  subnet: string;
  ipv6Subnet?: string;
}

/**
 * "10.244.3.0/24" (+ "fd00:10:244:3::/64") -> "10.244.3.0-24&fd00:10:244:3::-64" (flannel's
 * MakeSubnetKey: a slash cannot appear in a key segment or file name; IPv6 in Go's text form).
 */
export function formatSubnetKey(subnet: string, ipv6Subnet?: string): string {
  const c = parseCidr4(subnet);
  if (c === null) throw new Error(`lease subnet ${JSON.stringify(subnet)} is not an IPv4 network`);
  const v4 = formatCidr4(c).replace('/', '-');
  if (ipv6Subnet === undefined) return v4;
  const c6 = parseCidr(ipv6Subnet);
  if (c6 === null || c6.addr.family !== 6 || hasHostBits(c6)) throw new Error(`lease IPv6 subnet ${JSON.stringify(ipv6Subnet)} is not an IPv6 network`);
  return `${v4}&${formatIp(c6.addr)}-${c6.prefix}`;
}

// flannel's subnetRegex, anchored on both ends here (callers pass the key's last segment): the
// IPv6 part in lowercase hex only, its prefix below 128 (strconv.ParseUint(.., 10, 7)).
const KEY_RE = /^([0-9.]+)-([0-9]{1,2})(?:&([0-9a-f:]+)-([0-9]{1,3}))?$/;

/** "10.244.3.0-24&fd00:10:244:3::-64" -> both subnets in network form; null for anything that is not a lease key. */
export function parseLeaseKey(key: string): LeaseKey | null {
  const m = KEY_RE.exec(key);
  if (!m) return null;
  const c = parseCidr4(`${m[1]}/${m[2]}`);
  if (c === null) return null;
  const subnet = formatCidr4(c);
  if (m[3] === undefined) return { subnet };
  const prefix = Number(m[4]);
  const c6 = prefix < 128 ? parseCidr(`${m[3]}/${prefix}`) : null;
  if (c6 === null || c6.addr.family !== 6 || hasHostBits(c6)) return null;
  return { subnet, ipv6Subnet: formatCidr(canonicalCidr(c6)) };
}

/** "10.244.3.0-24" -> "10.244.3.0/24"; null for anything else. A dual-stack key yields its IPv4 part. */
export function parseSubnetKey(key: string): string | null {
  return parseLeaseKey(key)?.subnet ?? null;
}

/**
 * Renders flannel's lease JSON, keys in LeaseAttrs order. PublicIPv6 and BackendV6Data appear only
 * on a dual-stack lease, so an IPv4-only lease keeps weft's earlier bytes (flannel writes
 * "PublicIPv6":null there, no omitempty; both forms decode the same). Backend(V6)Data is omitted
 * when empty (Go's omitempty).
 */
export function formatLeaseAttrs(attrs: LeaseAttrs, extra?: Record<string, unknown>): string {
  const out: Record<string, unknown> = { PublicIP: attrs.publicIp };
  if (attrs.publicIpv6 !== undefined) out['PublicIPv6'] = attrs.publicIpv6;
  out['BackendType'] = attrs.backendType;
  const data = orderBackendData(attrs.backendData);
  if (data) out['BackendData'] = data;
  const data6 = attrs.backendV6Data && orderBackendData(attrs.backendV6Data);
  if (data6) out['BackendV6Data'] = data6;
  if (extra) Object.assign(out, extra);
  return JSON.stringify(out);
}

function orderBackendData(d: BackendData): Record<string, unknown> | undefined {
  const { VNI, VtepMAC, ...rest } = d;
  const data: Record<string, unknown> = {};
  if (VNI !== undefined) data['VNI'] = VNI;
  if (VtepMAC !== undefined) data['VtepMAC'] = VtepMAC;
  Object.assign(data, rest);
  return Object.keys(data).length > 0 ? data : undefined;
}

/** Parses flannel's lease JSON (keys matched like Go, unknown keys ignored); throws on anything that is not a lease. */
export function parseLeaseAttrs(text: string | Uint8Array): LeaseAttrs & { raw: Record<string, unknown> } {
  const s = typeof text === 'string' ? text : Buffer.from(text).toString('utf8');
  const raw: unknown = JSON.parse(s);
  if (!isObject(raw)) throw new Error('lease value is not a JSON object');
  const ip = getKey(raw, 'PublicIP');
  if (typeof ip !== 'string' || parseIPv4(ip) === null) throw new Error(`lease PublicIP ${JSON.stringify(ip)} is not an IPv4 address`);
  const type = getKey(raw, 'BackendType') ?? '';
  if (typeof type !== 'string') throw new Error(`lease BackendType ${JSON.stringify(type)} is not a string`);
  const out: LeaseAttrs & { raw: Record<string, unknown> } = {
    publicIp: ip, backendType: type, backendData: parseBackendData(getKey(raw, 'BackendData'), 'BackendData') ?? {}, raw,
  };
  const ip6 = getKey(raw, 'PublicIPv6');
  if (ip6 !== undefined && ip6 !== null) {
    const a = typeof ip6 === 'string' ? parseIp(ip6) : null;
    if (a === null || a.family !== 6) throw new Error(`lease PublicIPv6 ${JSON.stringify(ip6)} is not an IPv6 address`);
    out.publicIpv6 = formatIp(a);
  }
  const data6 = parseBackendData(getKey(raw, 'BackendV6Data'), 'BackendV6Data');
  if (data6 !== undefined) out.backendV6Data = data6;
  return out;
}

function parseBackendData(data: unknown, name: string): BackendData | undefined {
  if (data === undefined || data === null) return undefined;
  if (!isObject(data)) throw new Error(`lease ${name} ${JSON.stringify(data)} is not an object`);
  const vni = getKey(data, 'VNI');
  const mac = getKey(data, 'VtepMAC');
  const out: BackendData = {};
  for (const [k, v] of Object.entries(data)) {
    if (k.toLowerCase() !== 'vni' && k.toLowerCase() !== 'vtepmac') out[k] = v;
  }
  if (vni !== undefined) {
    if (typeof vni !== 'number' || !Number.isInteger(vni)) throw new Error(`lease ${name}.VNI ${JSON.stringify(vni)} is not an integer`);
    out.VNI = vni;
  }
  if (mac !== undefined) {
    if (typeof mac !== 'string') throw new Error(`lease ${name}.VtepMAC ${JSON.stringify(mac)} is not a string`);
    out.VtepMAC = mac;
  }
  return out;
}

/** flannel's default etcd key prefix (here so that choosing a store does not load the etcd client). */
export const DEFAULT_ETCD_PREFIX = '/coreos.com/network';

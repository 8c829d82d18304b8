// flannel's wire formats for leases: the key "10.244.3.0-24" and the JSON value
// {"PublicIP":"…","BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"…"}}.
import { formatCidr4, parseCidr4, parseIPv4 } from '../../lib/ip/ipv4.ts';
import { getKey, isObject } from '../config/net-conf-error.ts';
import type { BackendData } from './store.ts';

/** The node data a lease carries (flannel's LeaseAttrs). */
export interface LeaseAttrs {
  publicIp: string;
  backendType: string;
  backendData: BackendData;
}

/** "10.244.3.0/24" -> "10.244.3.0-24" (flannel's key: a slash cannot appear in a key segment or file name). */
export function formatSubnetKey(subnet: string): string {
  const c = parseCidr4(subnet);
  if (c === null) throw new Error(`lease subnet ${JSON.stringify(subnet)} is not an IPv4 network`);
  return `${formatCidr4(c).replace('/', '-')}`;
}

/** "10.244.3.0-24" -> "10.244.3.0/24"; null for anything else. A dual-stack key ("…-24&fd00::-64") yields its IPv4 part. */
export function parseSubnetKey(key: string): string | null {
  const v4 = key.split('&')[0] ?? '';
  const m = /^([0-9.]+)-([0-9]{1,2})$/.exec(v4);
  if (!m) return null;
  const c = parseCidr4(`${m[1]}/${m[2]}`);
  return c === null ? null : formatCidr4(c);
}

/** Renders flannel's lease JSON, keys in flannel's order; BackendData omitted when empty (Go's omitempty). */
export function formatLeaseAttrs(attrs: LeaseAttrs, extra?: Record<string, unknown>): string {
  const out: Record<string, unknown> = { PublicIP: attrs.publicIp, BackendType: attrs.backendType };
  const { VNI, VtepMAC, ...rest } = attrs.backendData;
  const data: Record<string, unknown> = {};
  if (VNI !== undefined) data['VNI'] = VNI;
  if (VtepMAC !== undefined) data['VtepMAC'] = VtepMAC;
  Object.assign(data, rest);
  if (Object.keys(data).length > 0) out['BackendData'] = data;
  if (extra) Object.assign(out, extra);
  return JSON.stringify(out);
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
  const data = getKey(raw, 'BackendData') ?? {};
  if (!isObject(data)) throw new Error(`lease BackendData ${JSON.stringify(data)} is not an object`);
  const vni = getKey(data, 'VNI');
  const mac = getKey(data, 'VtepMAC');
  const backendData: BackendData = {};
  for (const [k, v] of Object.entries(data)) {
    if (k.toLowerCase() !== 'vni' && k.toLowerCase() !== 'vtepmac') backendData[k] = v;
  }
  if (vni !== undefined) {
    if (typeof vni !== 'number' || !Number.isInteger(vni)) throw new Error(`lease BackendData.VNI ${JSON.stringify(vni)} is not an integer`);
    backendData.VNI = vni;
  }
  if (mac !== undefined) {
    if (typeof mac !== 'string') throw new Error(`lease BackendData.VtepMAC ${JSON.stringify(mac)} is not a string`);
    backendData.VtepMAC = mac;
  }
  return { publicIp: ip, backendType: type, backendData, raw };
}

/** flannel's default etcd key prefix (here so that choosing a store does not load the etcd client). */
export const DEFAULT_ETCD_PREFIX = '/coreos.com/network';

// flannel's net-conf.json (also the value of <etcd-prefix>/config): parse, validate, fill defaults.
// The rules follow flannel's CheckNetworkConfig so that a config flannel accepts means the same here.
import { type BackendConf, normalizeBackendConf } from './backend-conf.ts';
import { type Cidr4, formatIPv4, parseCidr4, parseCidr4Loose, parseIPv4, prefixSize, containsIPv4, lastIPv4, formatCidr4 } from '../../lib/ip/ipv4.ts';
import { NetConfError, getKey, isObject } from './net-conf-error.ts';
import { type NetConfV6, normalizeNetConfV6 } from './net-conf-v6.ts';

/**
 * The validated net-conf: all defaults filled, addresses as strings in canonical form.
 * With EnableIPv4 false (IPv6-only) the four IPv4 fields are empty ('' and 0); the ipv6* fields
 * are set exactly when enableIPv6 is true.
 */
export interface NetConf extends Partial<NetConfV6> {
  /** EnableIPv4 (flannel's default true). */
  enableIPv4: boolean;
  /** EnableIPv6 (default false); ipv6Network, ipv6SubnetLen, ipv6SubnetMin, ipv6SubnetMax come with it. */
  enableIPv6: boolean;
  /** The cluster network, e.g. "10.244.0.0/16". */
  network: string;
  /** Prefix length of each node's subnet. */
  subnetLen: number;
  /** Lowest subnet address a node may lease, e.g. "10.244.1.0" (flannel skips the first subnet). */
  subnetMin: string;
  /** Highest subnet address a node may lease, e.g. "10.244.255.0". */
  subnetMax: string;
  backend: BackendConf;
}

/** Parses net-conf.json text (or bytes); throws NetConfError naming the key and the bad value. */
export function parseNetConf(text: string | Uint8Array): NetConf {
  const s = typeof text === 'string' ? text : Buffer.from(text).toString('utf8');
  let raw: unknown;
  try {
    raw = JSON.parse(s);
  } catch (err) {
    throw new NetConfError('(document)', s.slice(0, 40), 'is not valid JSON', { cause: err });
  }
  return normalizeNetConf(raw);
}

/** Validates a decoded net-conf object and fills flannel's defaults. */
export function normalizeNetConf(raw: unknown): NetConf {
  if (!isObject(raw)) throw new NetConfError('(document)', raw, 'must be a JSON object');
  const enableIPv4 = normalizeBool(raw, 'EnableIPv4', true);
  const enableIPv6 = normalizeBool(raw, 'EnableIPv6', false);
  // flannel's GetIPFamily refuses this combination ("none defined stack").
  if (!enableIPv4 && !enableIPv6) throw new NetConfError('EnableIPv4', false, 'and EnableIPv6 are both false: enable at least one family');
  const v4 = enableIPv4 ? normalizeV4(raw) : { network: '', subnetLen: 0, subnetMin: '', subnetMax: '' };
  return {
    enableIPv4,
    enableIPv6,
    ...v4,
    ...(enableIPv6 ? normalizeNetConfV6(raw) : {}),
    backend: normalizeBackendConf(getKey(raw, 'Backend')),
  };
}

/** True when the net-conf makes the node lease an IPv6 subnet too (the ipv6* fields are then set). */
export function hasIPv6(conf: NetConf): conf is NetConf & NetConfV6 {
  return conf.enableIPv6 && conf.ipv6Network !== undefined;
}

function normalizeBool(raw: Record<string, unknown>, key: string, dflt: boolean): boolean {
  const v = getKey(raw, key);
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'boolean') throw new NetConfError(key, v, 'must be true or false');
  return v;
}

function normalizeV4(raw: Record<string, unknown>): Pick<NetConf, 'network' | 'subnetLen' | 'subnetMin' | 'subnetMax'> {
  const network = normalizeNetwork(getKey(raw, 'Network'));
  const subnetLen = normalizeSubnetLen(getKey(raw, 'SubnetLen'), network);
  const size = prefixSize(subnetLen);
  // flannel skips the first subnet: an interface holding the network address itself confuses tools.
  const min = normalizeBound(raw, 'SubnetMin', network, subnetLen, network.ip + size);
  const max = normalizeBound(raw, 'SubnetMax', network, subnetLen, lastIPv4(network) + 1 - size);
  if (min > max) {
    throw new NetConfError('SubnetMin', formatIPv4(min), `is above SubnetMax ${formatIPv4(max)}`);
  }
  return { network: formatCidr4(network), subnetLen, subnetMin: formatIPv4(min), subnetMax: formatIPv4(max) };
}

function normalizeNetwork(v: unknown): Cidr4 {
  if (v === undefined || v === null || v === '') throw new NetConfError('Network', v, 'is required (an IPv4 CIDR such as "10.244.0.0/16")');
  if (typeof v !== 'string') throw new NetConfError('Network', v, 'must be a string such as "10.244.0.0/16"');
  const c = parseCidr4(v);
  if (c === null) {
    const loose = parseCidr4Loose(v);
    if (loose !== null) {
      const net = { ip: loose.ip - (loose.ip % prefixSize(loose.prefix)), prefix: loose.prefix };
      throw new NetConfError('Network', v, `has host bits set; did you mean "${formatCidr4(net)}"?`);
    }
    throw new NetConfError('Network', v, 'is not an IPv4 CIDR such as "10.244.0.0/16"');
  }
  return c;
}

function normalizeSubnetLen(v: unknown, network: Cidr4): number {
  if (v === undefined || v === null || v === 0) {
    // Defaults as in flannel: /24 per node when the network holds at least four of them,
    // otherwise a quarter of the network; below /28 there is no room for four /30s.
    if (network.prefix > 28) throw new NetConfError('Network', formatCidr4(network), 'is too small: the smallest useful network is a /28');
    return network.prefix <= 22 ? 24 : network.prefix + 2;
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new NetConfError('SubnetLen', v, 'must be a positive integer');
  // Each node needs room for a gateway and at least one pod besides network/broadcast addresses.
  if (v > 30) throw new NetConfError('SubnetLen', v, 'must be at most 30');
  // The first subnet is never leased, so the network must hold at least four subnets.
  if (v < network.prefix + 2) {
    throw new NetConfError('SubnetLen', v, `must be at least ${network.prefix + 2} so that Network ${formatCidr4(network)} holds four subnets`);
  }
  return v;
}

function normalizeBound(raw: Record<string, unknown>, key: string, network: Cidr4, subnetLen: number, dflt: number): number {
  const v = getKey(raw, key);
  if (v === undefined || v === null || v === '' || v === '0.0.0.0') return dflt;
  const ip = typeof v === 'string' ? parseIPv4(v) : null;
  if (ip === null) throw new NetConfError(key, v, 'must be an IPv4 address such as "10.244.1.0"');
  if (!containsIPv4(network, ip)) throw new NetConfError(key, v, `is not inside Network ${formatCidr4(network)}`);
  if (ip % prefixSize(subnetLen) !== 0) throw new NetConfError(key, v, `is not on a /${subnetLen} boundary (SubnetLen)`);
  return ip;
}

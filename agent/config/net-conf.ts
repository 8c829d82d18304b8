// flannel's net-conf.json (also the value of <etcd-prefix>/config): parse, validate, fill defaults.
// The rules follow flannel's CheckNetworkConfig so that a config flannel accepts means the same here.
import { type BackendConf, normalizeBackendConf } from './backend-conf.ts';
import type { Family } from '../../lib/ip/index.ts';
import { type FamilyNetConf, normalizeFamilyNetConf } from './net-conf-family.ts';
import { NetConfError, getKey, isObject } from './net-conf-error.ts';

/** The validated IPv6 keys (IPv6Network, IPv6SubnetLen, IPv6SubnetMin/Max), addresses in Go's canonical text form. */
export interface NetConfV6 {
  ipv6Network: string;
  ipv6SubnetLen: number;
  ipv6SubnetMin: string;
  ipv6SubnetMax: string;
}

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
  const v4 = enableIPv4 ? normalizeFamilyNetConf(raw, 4) : { network: '', subnetLen: 0, subnetMin: '', subnetMax: '' };
  const v6 = enableIPv6 ? normalizeFamilyNetConf(raw, 6) : undefined;
  return {
    enableIPv4,
    enableIPv6,
    ...v4,
    ...(v6 ? { ipv6Network: v6.network, ipv6SubnetLen: v6.subnetLen, ipv6SubnetMin: v6.subnetMin, ipv6SubnetMax: v6.subnetMax } : {}),
    backend: normalizeBackendConf(getKey(raw, 'Backend')),
  };
}

/** True when the net-conf makes the node lease an IPv6 subnet too (the ipv6* fields are then set). */
export function hasIPv6(conf: NetConf): conf is NetConf & NetConfV6 {
  return conf.enableIPv6 && conf.ipv6Network !== undefined;
}

/** One family's network and subnet range of a validated net-conf; undefined when that family is off. */
export function familyNetConf(conf: NetConf, family: Family): FamilyNetConf | undefined {
  if (family === 4) return conf.enableIPv4 ? { network: conf.network, subnetLen: conf.subnetLen, subnetMin: conf.subnetMin, subnetMax: conf.subnetMax } : undefined;
  return hasIPv6(conf) ? { network: conf.ipv6Network, subnetLen: conf.ipv6SubnetLen, subnetMin: conf.ipv6SubnetMin, subnetMax: conf.ipv6SubnetMax } : undefined;
}

function normalizeBool(raw: Record<string, unknown>, key: string, dflt: boolean): boolean {
  const v = getKey(raw, key);
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'boolean') throw new NetConfError(key, v, 'must be true or false');
  return v;
}

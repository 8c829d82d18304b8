// One address family's keys of flannel's net-conf.json (Network, SubnetLen, SubnetMin, SubnetMax, or
// their IPv6* twins), validated with flannel's CheckNetworkConfig rules for that family and filled
// with its defaults. Pure; the same code for both families, their differences in one table.
import { type Cidr, type Family, canonicalCidr, cidrContains, familyBits, formatCidr, formatIp, hasHostBits, lastOf, maskValue, parseCidr, parseIp } from '../../lib/ip/index.ts';
import { NetConfError, getKey } from './net-conf-error.ts';

/** One family's validated keys: canonical text, defaults filled. */
export interface FamilyNetConf {
  network: string;
  subnetLen: number;
  subnetMin: string;
  subnetMax: string;
}

/** What differs between the families: key names, flannel's default subnet length, and the wording of errors. */
interface FamilyRules {
  network: string;
  subnetLen: string;
  subnetMin: string;
  subnetMax: string;
  /** flannel's per-node default (/24, /64), used while the network holds four of them. */
  defaultLen: number;
  required: string;
  notString: string;
  notCidr: string;
  tooSmall: string;
  notAddress: string;
}

const RULES: Record<Family, FamilyRules> = {
  4: {
    network: 'Network', subnetLen: 'SubnetLen', subnetMin: 'SubnetMin', subnetMax: 'SubnetMax', defaultLen: 24,
    required: 'is required (an IPv4 CIDR such as "10.244.0.0/16")',
    notString: 'must be a string such as "10.244.0.0/16"',
    notCidr: 'is not an IPv4 CIDR such as "10.244.0.0/16"',
    tooSmall: 'is too small: the smallest useful network is a /28',
    notAddress: 'must be an IPv4 address such as "10.244.1.0"',
  },
  6: {
    network: 'IPv6Network', subnetLen: 'IPv6SubnetLen', subnetMin: 'IPv6SubnetMin', subnetMax: 'IPv6SubnetMax', defaultLen: 64,
    required: 'is required with EnableIPv6 (an IPv6 CIDR such as "fd00:10:244::/56")',
    notString: 'must be a string: an IPv6 CIDR such as "fd00:10:244::/56"',
    notCidr: 'is not an IPv6 CIDR such as "fd00:10:244::/56"',
    tooSmall: 'is too small: the smallest useful IPv6 network is a /124',
    notAddress: 'must be an IPv6 address such as "fd00:10:244:1::"',
  },
};

/** Validates one family's keys of a decoded net-conf object and fills flannel's defaults; throws NetConfError. */
export function normalizeFamilyNetConf(raw: Record<string, unknown>, family: Family): FamilyNetConf {
  const r = RULES[family];
  const network = normalizeNetwork(getKey(raw, r.network), family, r);
  const subnetLen = normalizeSubnetLen(getKey(raw, r.subnetLen), network, r);
  const size = 1n << BigInt(familyBits(family) - subnetLen);
  // flannel skips the first subnet: an interface holding the network address itself confuses tools.
  const min = normalizeBound(raw, r.subnetMin, network, subnetLen, network.addr.value + size, r);
  const max = normalizeBound(raw, r.subnetMax, network, subnetLen, lastOf(network).value + 1n - size, r);
  const text = (v: bigint): string => formatIp({ family, value: v });
  if (min > max) throw new NetConfError(r.subnetMin, text(min), `is above ${r.subnetMax} ${text(max)}`);
  return { network: formatCidr(network), subnetLen, subnetMin: text(min), subnetMax: text(max) };
}

function normalizeNetwork(v: unknown, family: Family, r: FamilyRules): Cidr {
  if (v === undefined || v === null || v === '') throw new NetConfError(r.network, v, r.required);
  if (typeof v !== 'string') throw new NetConfError(r.network, v, r.notString);
  const c = parseCidr(v);
  if (c === null || c.addr.family !== family) throw new NetConfError(r.network, v, r.notCidr);
  if (hasHostBits(c)) throw new NetConfError(r.network, v, `has host bits set; did you mean "${formatCidr(canonicalCidr(c))}"?`);
  return c;
}

function normalizeSubnetLen(v: unknown, network: Cidr, r: FamilyRules): number {
  const bits = familyBits(network.addr.family);
  if (v === undefined || v === null || v === 0) {
    // Defaults as in flannel: the family's default per node while the network holds four of them,
    // otherwise a quarter of the network; the smallest subnet (four addresses) needs a network of sixteen.
    if (network.prefix > bits - 4) throw new NetConfError(r.network, formatCidr(network), r.tooSmall);
    return network.prefix <= r.defaultLen - 2 ? r.defaultLen : network.prefix + 2;
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new NetConfError(r.subnetLen, v, 'must be a positive integer');
  // Each node needs room for a gateway and at least one pod besides network/broadcast addresses.
  if (v > bits - 2) throw new NetConfError(r.subnetLen, v, `must be at most ${bits - 2}`);
  // The first subnet is never leased, so the network must hold at least four subnets.
  if (v < network.prefix + 2) {
    throw new NetConfError(r.subnetLen, v, `must be at least ${network.prefix + 2} so that ${r.network} ${formatCidr(network)} holds four subnets`);
  }
  return v;
}

function normalizeBound(raw: Record<string, unknown>, key: string, network: Cidr, subnetLen: number, dflt: bigint, r: FamilyRules): bigint {
  const v = getKey(raw, key);
  if (v === undefined || v === null || v === '') return dflt;
  const ip = typeof v === 'string' ? parseIp(v) : null;
  if (ip === null || ip.family !== network.addr.family) throw new NetConfError(key, v, r.notAddress);
  // flannel reads the zero address ("0.0.0.0", "::") as unset.
  if (ip.value === 0n) return dflt;
  if (!cidrContains(network, ip)) throw new NetConfError(key, v, `is not inside ${r.network} ${formatCidr(network)}`);
  if ((ip.value & maskValue(ip.family, subnetLen)) !== ip.value) throw new NetConfError(key, v, `is not on a /${subnetLen} boundary (${r.subnetLen})`);
  return ip.value;
}

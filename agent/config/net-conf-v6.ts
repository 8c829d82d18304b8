// The IPv6 half of flannel's net-conf (IPv6Network, IPv6SubnetLen, IPv6SubnetMin/Max): the same
// rules as flannel's CheckNetworkConfig applies when EnableIPv6 is true.
import { type Cidr, canonicalCidr, cidrContains, formatCidr, formatIp, hasHostBits, lastOf, maskValue, parseCidr, parseIp } from '../../lib/ip/index.ts';
import { NetConfError, getKey } from './net-conf-error.ts';

/** The validated IPv6 keys, addresses in Go's canonical text form. */
export interface NetConfV6 {
  ipv6Network: string;
  ipv6SubnetLen: number;
  ipv6SubnetMin: string;
  ipv6SubnetMax: string;
}

/** Validates the IPv6 keys of a net-conf object (EnableIPv6 is true) and fills flannel's defaults. */
export function normalizeNetConfV6(raw: Record<string, unknown>): NetConfV6 {
  const network = normalizeIPv6Network(getKey(raw, 'IPv6Network'));
  const subnetLen = normalizeIPv6SubnetLen(getKey(raw, 'IPv6SubnetLen'), network);
  const size = 1n << BigInt(128 - subnetLen);
  // flannel skips the first subnet here too: its address would be the network address itself.
  const min = normalizeBound6(raw, 'IPv6SubnetMin', network, subnetLen, network.addr.value + size);
  const max = normalizeBound6(raw, 'IPv6SubnetMax', network, subnetLen, lastOf(network).value + 1n - size);
  if (min > max) throw new NetConfError('IPv6SubnetMin', text6(min), `is above IPv6SubnetMax ${text6(max)}`);
  return { ipv6Network: formatCidr(network), ipv6SubnetLen: subnetLen, ipv6SubnetMin: text6(min), ipv6SubnetMax: text6(max) };
}

function text6(v: bigint): string {
  return formatIp({ family: 6, value: v });
}

function normalizeIPv6Network(v: unknown): Cidr {
  const example = 'an IPv6 CIDR such as "fd00:10:244::/56"';
  if (v === undefined || v === null || v === '') throw new NetConfError('IPv6Network', v, `is required with EnableIPv6 (${example})`);
  if (typeof v !== 'string') throw new NetConfError('IPv6Network', v, `must be a string: ${example}`);
  const c = parseCidr(v);
  if (c === null || c.addr.family !== 6) throw new NetConfError('IPv6Network', v, `is not ${example}`);
  if (hasHostBits(c)) throw new NetConfError('IPv6Network', v, `has host bits set; did you mean "${formatCidr(canonicalCidr(c))}"?`);
  return c;
}

function normalizeIPv6SubnetLen(v: unknown, network: Cidr): number {
  if (v === undefined || v === null || v === 0) {
    // flannel: a /64 per node while the network holds four of them, else a quarter of the
    // network; a /126 (four addresses) is the smallest subnet, so /124 the smallest network.
    if (network.prefix > 124) throw new NetConfError('IPv6Network', formatCidr(network), 'is too small: the smallest useful IPv6 network is a /124');
    return network.prefix <= 62 ? 64 : network.prefix + 2;
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new NetConfError('IPv6SubnetLen', v, 'must be a positive integer');
  if (v > 126) throw new NetConfError('IPv6SubnetLen', v, 'must be at most 126');
  if (v < network.prefix + 2) {
    throw new NetConfError('IPv6SubnetLen', v, `must be at least ${network.prefix + 2} so that IPv6Network ${formatCidr(network)} holds four subnets`);
  }
  return v;
}

function normalizeBound6(raw: Record<string, unknown>, key: string, network: Cidr, subnetLen: number, dflt: bigint): bigint {
  const v = getKey(raw, key);
  if (v === undefined || v === null || v === '') return dflt;
  const ip = typeof v === 'string' ? parseIp(v) : null;
  if (ip === null || ip.family !== 6) throw new NetConfError(key, v, 'must be an IPv6 address such as "fd00:10:244:1::"');
  // flannel reads "::" as unset.
  if (ip.value === 0n) return dflt;
  if (!cidrContains(network, ip)) throw new NetConfError(key, v, `is not inside IPv6Network ${formatCidr(network)}`);
  if ((ip.value & maskValue(6, subnetLen)) !== ip.value) throw new NetConfError(key, v, `is not on a /${subnetLen} boundary (IPv6SubnetLen)`);
  return ip.value;
}


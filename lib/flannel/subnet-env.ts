// /run/flannel/subnet.env: written by weftd once it holds a lease, read by the flannel CNI plugins.
// Format as flannel's WriteSubnetFile writes it: KEY=VALUE lines, the enabled families in order
// (FLANNEL_NETWORK, FLANNEL_SUBNET, then FLANNEL_IPV6_NETWORK, FLANNEL_IPV6_SUBNET), then
// FLANNEL_MTU and FLANNEL_IPMASQ. The subnets are the node's first usable address with the
// lease's prefix length (the bridge gateway), e.g. 10.244.3.1/24 and fd00:10:244:3::1/64.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { writeFileAtomicSync } from '../fs/atomic-write.ts';
import { formatIp } from '../ip/addr.ts';
import { canonicalCidr, cidrContains, formatCidr, hasHostBits, parseCidr } from '../ip/cidr.ts';
import { formatCidr4, formatIPv4, parseCidr4, parseCidr4Loose, prefixSize, containsIPv4 } from '../ip/ipv4.ts';

/**
 * The content of subnet.env, subnets in gateway form ("10.244.3.1/24"). `network` and `subnet` are
 * '' in an IPv6-only file (flannel then writes no FLANNEL_NETWORK / FLANNEL_SUBNET); the IPv6
 * pair is present exactly when the file has FLANNEL_IPV6_NETWORK and FLANNEL_IPV6_SUBNET.
 */
export interface SubnetEnv {
  network: string;
  subnet: string;
  mtu: number;
  ipMasq: boolean;
  /** FLANNEL_IPV6_NETWORK ("fd00:10:244::/56"). */
  ipv6Network?: string;
  /** FLANNEL_IPV6_SUBNET as written ("fd00:10:244:3::1/64"). */
  ipv6Subnet?: string;
}

/**
 * What weftd knows when it writes the file: the lease's subnets in network form ("10.244.3.0/24",
 * "fd00:10:244:3::/64"). An IPv4 pair, an IPv6 pair or both; `network` '' means no IPv4 side.
 */
export interface SubnetEnvInput {
  network: string;
  leaseSubnet: string;
  mtu: number;
  ipMasq: boolean;
  ipv6Network?: string | undefined;
  ipv6LeaseSubnet?: string | undefined;
}

/** Network form -> gateway form: "10.244.3.0/24" -> "10.244.3.1/24" (FLANNEL_SUBNET); throws on a non-network prefix. */
export function gatewayForm(leaseSubnet: string): string {
  const sn = parseCidr4(leaseSubnet);
  if (sn === null) throw new Error(`subnet.env: lease subnet ${JSON.stringify(leaseSubnet)} is not an IPv4 network`);
  return `${formatIPv4(sn.ip + 1)}/${sn.prefix}`;
}

/** IPv6 network form -> gateway form: "fd00:10:244:3::/64" -> "fd00:10:244:3::1/64" (FLANNEL_IPV6_SUBNET). */
export function gatewayForm6(leaseSubnet: string): string {
  const sn = parseCidr(leaseSubnet);
  if (sn === null || sn.addr.family !== 6 || hasHostBits(sn)) throw new Error(`subnet.env: lease IPv6 subnet ${JSON.stringify(leaseSubnet)} is not an IPv6 network`);
  return `${formatIp({ family: 6, value: sn.addr.value + 1n })}/${sn.prefix}`;
}

/** Gateway form -> network form: FLANNEL_SUBNET "10.244.3.1/24" -> the node subnet "10.244.3.0/24" (either family); null when not a prefix. */
export function networkForm(flannelSubnet: string): string | null {
  const c = parseCidr(flannelSubnet);
  return c === null ? null : formatCidr(canonicalCidr(c));
}

/** Renders subnet.env text from the lease; throws on a subnet that is not a network prefix or when no family is given. */
export function formatSubnetEnv(input: SubnetEnvInput): string {
  if (!Number.isInteger(input.mtu) || input.mtu < 68) throw new Error(`subnet.env: MTU ${input.mtu} is not a valid MTU`);
  const lines: string[] = [];
  if (input.network !== '') lines.push(`FLANNEL_NETWORK=${input.network}`, `FLANNEL_SUBNET=${gatewayForm(input.leaseSubnet)}`);
  if (input.ipv6Network !== undefined || input.ipv6LeaseSubnet !== undefined) {
    if (input.ipv6Network === undefined || input.ipv6LeaseSubnet === undefined) throw new Error('subnet.env: the IPv6 network and the IPv6 lease subnet go together');
    lines.push(`FLANNEL_IPV6_NETWORK=${input.ipv6Network}`, `FLANNEL_IPV6_SUBNET=${gatewayForm6(input.ipv6LeaseSubnet)}`);
  }
  if (lines.length === 0) throw new Error('subnet.env: neither an IPv4 nor an IPv6 network to write');
  lines.push(`FLANNEL_MTU=${input.mtu}`, `FLANNEL_IPMASQ=${input.ipMasq}`, '');
  return lines.join('\n');
}

/** Writes subnet.env atomically at `path` (temp file in the same directory, fsync, rename), creating the directory. */
export function writeSubnetEnv(path: string, input: SubnetEnvInput): void {
  const text = formatSubnetEnv(input);
  mkdirSync(dirname(path), { recursive: true });
  // rename(2) replaces the target atomically: a reader sees the old file or the new one, never half.
  writeFileAtomicSync(path, text, { mode: 0o644 });
}

const LINE = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/;

/** Parses subnet.env text (either family or both); tolerates comments, blank lines and unknown keys, rejects anything else. */
export function parseSubnetEnv(text: string): SubnetEnv {
  const vars = new Map<string, string>();
  text.split(/\r?\n/).forEach((rawLine, i) => {
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#')) return;
    const m = LINE.exec(line);
    if (!m) throw new Error(`subnet.env line ${i + 1}: expected KEY=VALUE, got ${JSON.stringify(line.slice(0, 60))}`);
    vars.set(m[1] as string, (m[2] as string).trim());
  });
  const need = (key: string): string => {
    const v = vars.get(key);
    if (v === undefined || v === '') throw new Error(`subnet.env: ${key} is missing`);
    return v;
  };
  const v6 = vars.has('FLANNEL_IPV6_NETWORK') || vars.has('FLANNEL_IPV6_SUBNET') ? parseV6(need('FLANNEL_IPV6_NETWORK'), need('FLANNEL_IPV6_SUBNET')) : undefined;
  // flannel writes no IPv4 keys when EnableIPv4 is false.
  const v4 = v6 === undefined || vars.has('FLANNEL_NETWORK') || vars.has('FLANNEL_SUBNET') ? parseV4(need('FLANNEL_NETWORK'), need('FLANNEL_SUBNET')) : { network: '', subnet: '' };
  const mtuText = need('FLANNEL_MTU');
  const mtu = Number(mtuText);
  if (!/^[0-9]+$/.test(mtuText) || mtu < 68 || mtu > 65535) throw new Error(`subnet.env: FLANNEL_MTU ${JSON.stringify(mtuText)} is not an MTU`);
  const masqText = need('FLANNEL_IPMASQ');
  if (masqText !== 'true' && masqText !== 'false') throw new Error(`subnet.env: FLANNEL_IPMASQ ${JSON.stringify(masqText)} must be true or false`);
  return { ...v4, mtu, ipMasq: masqText === 'true', ...(v6 ?? {}) };
}

function parseV4(networkText: string, subnetText: string): { network: string; subnet: string } {
  const network = parseCidr4(networkText);
  if (network === null) throw new Error(`subnet.env: FLANNEL_NETWORK ${JSON.stringify(networkText)} is not an IPv4 network`);
  const subnet = parseCidr4Loose(subnetText);
  if (subnet === null || subnet.prefix < network.prefix || !containsIPv4(network, subnet.ip)) {
    throw new Error(`subnet.env: FLANNEL_SUBNET ${JSON.stringify(subnetText)} is not an address/prefix inside ${networkText}`);
  }
  if (subnet.ip % prefixSize(subnet.prefix) === 0 && subnet.prefix < 31) {
    throw new Error(`subnet.env: FLANNEL_SUBNET ${JSON.stringify(subnetText)} is a network address, expected the gateway (first usable) address`);
  }
  return { network: formatCidr4(network), subnet: subnetText };
}

function parseV6(networkText: string, subnetText: string): { ipv6Network: string; ipv6Subnet: string } {
  const network = parseCidr(networkText);
  if (network === null || network.addr.family !== 6 || hasHostBits(network)) throw new Error(`subnet.env: FLANNEL_IPV6_NETWORK ${JSON.stringify(networkText)} is not an IPv6 network`);
  const subnet = parseCidr(subnetText);
  if (subnet === null || subnet.addr.family !== 6 || subnet.prefix < network.prefix || !cidrContains(network, subnet.addr)) {
    throw new Error(`subnet.env: FLANNEL_IPV6_SUBNET ${JSON.stringify(subnetText)} is not an address/prefix inside ${networkText}`);
  }
  if (!hasHostBits(subnet) && subnet.prefix < 127) {
    throw new Error(`subnet.env: FLANNEL_IPV6_SUBNET ${JSON.stringify(subnetText)} is a network address, expected the gateway (first usable) address`);
  }
  return { ipv6Network: formatCidr(network), ipv6Subnet: subnetText };
}

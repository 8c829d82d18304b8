// The subnets a node held before a restart, read back from its subnet.env (no netns, a file read),
// so that weftd asks the store for the same ones again (preferredSubnet / preferredIpv6Subnet).
import { readFileSync } from 'node:fs';
import { containsIPv4, parseCidr4, parseCidr4Loose } from '../lib/ip/ipv4.ts';
import { cidrContains, parseCidr } from '../lib/ip/index.ts';
import { networkForm, parseSubnetEnv } from '../lib/flannel/subnet-env.ts';

/** FLANNEL_IPV6_SUBNET of an existing subnet.env in network form, as preferredIpv6Subnet, if it lies in `network6`. */
export function previousIpv6Subnet(path: string, network6: string | undefined): { preferredIpv6Subnet?: string } {
  try {
    const env = parseSubnetEnv(readFileSync(path, 'utf8'));
    const net = parseCidr(network6 ?? '');
    const sn = networkForm(env.ipv6Subnet ?? '');
    const c = parseCidr(sn ?? '');
    return net !== null && c !== null && sn !== null && cidrContains(net, c.addr) ? { preferredIpv6Subnet: sn } : {};
  } catch {
    return {};
  }
}

/** The subnet (network form) remembered in an existing subnet.env, if it lies in `network`. */
export function previousSubnet(path: string, network: string): string | undefined {
  try {
    const env = parseSubnetEnv(readFileSync(path, 'utf8'));
    const sn = parseCidr4Loose(env.subnet);
    const net = parseCidr4(network);
    const ip = networkForm(env.subnet) ?? undefined;
    return ip !== undefined && net !== null && sn !== null && containsIPv4(net, sn.ip) ? ip : undefined;
  } catch {
    return undefined;
  }
}

// /run/flannel/subnet.env: written by weftd once it holds a lease, read by the flannel CNI plugins.
// Format as flannel writes it: KEY=VALUE lines, FLANNEL_SUBNET being the node's first usable
// address with the lease's prefix length (the bridge gateway), e.g. 10.244.3.1/24.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { writeFileAtomicSync } from '../fs/atomic-write.ts';
import { canonicalCidr, formatCidr, parseCidr } from '../ip/cidr.ts';
import { formatCidr4, formatIPv4, parseCidr4, parseCidr4Loose, prefixSize, containsIPv4 } from '../ip/ipv4.ts';

/** The content of subnet.env, with the subnet in its gateway form ("10.244.3.1/24"). */
export interface SubnetEnv {
  network: string;
  subnet: string;
  mtu: number;
  ipMasq: boolean;
}

/** What weftd knows when it writes the file: the lease's subnet in network form ("10.244.3.0/24"). */
export interface SubnetEnvInput {
  network: string;
  leaseSubnet: string;
  mtu: number;
  ipMasq: boolean;
}

/** Network form -> gateway form: "10.244.3.0/24" -> "10.244.3.1/24" (FLANNEL_SUBNET); throws on a non-network prefix. */
export function gatewayForm(leaseSubnet: string): string {
  const sn = parseCidr4(leaseSubnet);
  if (sn === null) throw new Error(`subnet.env: lease subnet ${JSON.stringify(leaseSubnet)} is not an IPv4 network`);
  return `${formatIPv4(sn.ip + 1)}/${sn.prefix}`;
}

/** Gateway form -> network form: FLANNEL_SUBNET "10.244.3.1/24" -> the node subnet "10.244.3.0/24" (either family); null when not a prefix. */
export function networkForm(flannelSubnet: string): string | null {
  const c = parseCidr(flannelSubnet);
  return c === null ? null : formatCidr(canonicalCidr(c));
}

/** Renders subnet.env text from the lease; throws on a subnet that is not a network prefix. */
export function formatSubnetEnv(input: SubnetEnvInput): string {
  const subnet = gatewayForm(input.leaseSubnet);
  if (!Number.isInteger(input.mtu) || input.mtu < 68) throw new Error(`subnet.env: MTU ${input.mtu} is not a valid MTU`);
  return [
    `FLANNEL_NETWORK=${input.network}`,
    `FLANNEL_SUBNET=${subnet}`,
    `FLANNEL_MTU=${input.mtu}`,
    `FLANNEL_IPMASQ=${input.ipMasq}`,
    '',
  ].join('\n');
}

/** Writes subnet.env atomically at `path` (temp file in the same directory, fsync, rename), creating the directory. */
export function writeSubnetEnv(path: string, input: SubnetEnvInput): void {
  const text = formatSubnetEnv(input);
  mkdirSync(dirname(path), { recursive: true });
  // rename(2) replaces the target atomically: a reader sees the old file or the new one, never half.
  writeFileAtomicSync(path, text, { mode: 0o644 });
}

const LINE = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/;

/** Parses subnet.env text; tolerates comments, blank lines and unknown keys (e.g. FLANNEL_IPV6_*), rejects anything else. */
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
  const networkText = need('FLANNEL_NETWORK');
  const network = parseCidr4(networkText);
  if (network === null) throw new Error(`subnet.env: FLANNEL_NETWORK ${JSON.stringify(networkText)} is not an IPv4 network`);
  const subnetText = need('FLANNEL_SUBNET');
  const subnet = parseCidr4Loose(subnetText);
  if (subnet === null || subnet.prefix < network.prefix || !containsIPv4(network, subnet.ip)) {
    throw new Error(`subnet.env: FLANNEL_SUBNET ${JSON.stringify(subnetText)} is not an address/prefix inside ${networkText}`);
  }
  if (subnet.ip % prefixSize(subnet.prefix) === 0 && subnet.prefix < 31) {
    throw new Error(`subnet.env: FLANNEL_SUBNET ${JSON.stringify(subnetText)} is a network address, expected the gateway (first usable) address`);
  }
  const mtuText = need('FLANNEL_MTU');
  const mtu = Number(mtuText);
  if (!/^[0-9]+$/.test(mtuText) || mtu < 68 || mtu > 65535) throw new Error(`subnet.env: FLANNEL_MTU ${JSON.stringify(mtuText)} is not an MTU`);
  const masqText = need('FLANNEL_IPMASQ');
  if (masqText !== 'true' && masqText !== 'false') throw new Error(`subnet.env: FLANNEL_IPMASQ ${JSON.stringify(masqText)} must be true or false`);
  return { network: formatCidr4(network), subnet: subnetText, mtu, ipMasq: masqText === 'true' };
}

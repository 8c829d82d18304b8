// subnet.env as flannel's CNI plugin reads it: KEY=VALUE lines, comma lists in FLANNEL_NETWORK and
// FLANNEL_IPV6_NETWORK (duplicates dropped), the IPv6 keys for dual-stack, unknown keys ignored.
// Errors carry flannel's wording so that runtime logs and runbooks match. Pure file I/O, no netns.
import { readFileSync } from 'node:fs';
import { CniError, ErrorCode } from '../cni/errors.ts';
import { canonicalCidr, formatCidr, parseCidr, type Cidr } from '../ip/index.ts';
import { scanSubnetEnv } from './subnet-env.ts';
import { isSysError } from '../errno/errno.ts';

/**
 * What the delegate is rendered from. `network` and `subnet` are the first IPv4 values ('' on an
 * IPv6-only node), `subnet` in flannel's gateway form ("10.244.3.1/24").
 */
export interface FlannelEnv {
  network: string;
  subnet: string;
  mtu: number;
  ipMasq: boolean;
  /** Every IPv4 cluster network (canonical, in file order, duplicates dropped). */
  networks?: string[];
  /** Every IPv6 cluster network. */
  ipv6Networks?: string[];
  /** FLANNEL_IPV6_SUBNET as written ("fd00:0:0:34::1/64"). */
  ipv6Subnet?: string;
}

/** Where the wording comes from: flannel's cni-plugin since v1.7.1-flannel2. */
function loadFailure(code: number, detail: string, cause?: unknown, details = ''): CniError {
  return new CniError(code, `failed to load flannel 'subnet.env' file: ${detail}. Check the flannel pod log for this node.`, details, { cause });
}

function parseNet(key: string, text: string): Cidr {
  const c = parseCidr(text);
  if (c === null) throw loadFailure(ErrorCode.ioFailure, `invalid CIDR address: ${text} (${key})`);
  return c;
}

function netList(key: string, text: string): string[] {
  const out: string[] = [];
  for (const part of text.split(',')) {
    const s = formatCidr(canonicalCidr(parseNet(key, part)));
    if (!out.includes(s)) out.push(s);
  }
  return out;
}

/** Parses subnet.env text as flannel does; `path` only names the file in messages. */
export function parseFlannelSubnetFile(text: string, path: string): FlannelEnv {
  let networks: string[] = [];
  let ipv6Networks: string[] = [];
  let subnet: string | undefined;
  let ipv6Subnet: string | undefined;
  let mtu: number | undefined;
  let ipMasq: boolean | undefined;
  for (const [key, value = ''] of scanSubnetEnv(text)) {
    switch (key) {
      case 'FLANNEL_NETWORK': networks = netList(key, value); break;
      case 'FLANNEL_IPV6_NETWORK': ipv6Networks = netList(key, value); break;
      case 'FLANNEL_SUBNET': parseNet(key, value); subnet = value; break;
      case 'FLANNEL_IPV6_SUBNET': parseNet(key, value); ipv6Subnet = value; break;
      case 'FLANNEL_MTU':
        if (!/^[0-9]+$/.test(value) || Number(value) > 0xffffffff) throw loadFailure(ErrorCode.ioFailure, `invalid FLANNEL_MTU ${JSON.stringify(value)}`);
        mtu = Number(value);
        break;
      case 'FLANNEL_IPMASQ': ipMasq = value === 'true'; break;
      default: break;
    }
  }
  const missing: string[] = [];
  if (networks.length === 0 && ipv6Networks.length === 0) missing.push('FLANNEL_NETWORK', 'FLANNEL_IPV6_NETWORK');
  if (subnet === undefined && ipv6Subnet === undefined) missing.push('FLANNEL_SUBNET', 'FLANNEL_IPV6_SUBNET');
  if (mtu === undefined) missing.push('FLANNEL_MTU');
  if (ipMasq === undefined) missing.push('FLANNEL_IPMASQ');
  // weftd writes the file atomically once it is complete: a missing key is an unfinished agent, so retry.
  if (missing.length > 0 || mtu === undefined || ipMasq === undefined) throw loadFailure(ErrorCode.tryAgainLater, `${path} is missing ${missing.join(', ')}`);
  return {
    network: networks[0] ?? '', subnet: subnet ?? '', mtu, ipMasq, networks, ipv6Networks,
    ...(ipv6Subnet !== undefined ? { ipv6Subnet } : {}),
  };
}

/** Reads and parses subnet.env; a missing file is code 11 (weftd holds no lease yet: the runtime retries). */
export function readFlannelSubnetFile(path: string): FlannelEnv {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if (isSysError(e, 'ENOENT')) {
      throw loadFailure(ErrorCode.tryAgainLater, `open ${path}: no such file or directory`, e, 'weftd writes it once it holds a subnet lease; is weftd running?');
    }
    throw loadFailure(ErrorCode.ioFailure, `open ${path}: ${(e as Error).message}`, e);
  }
  return parseFlannelSubnetFile(text, path);
}

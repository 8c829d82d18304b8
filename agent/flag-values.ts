// The value checks of weftd's address-like flags (pure, no netns): each throws an Error naming the
// flag and the value, so that weftd refuses a typo before it opens the lease store. A flag that is
// only looked up later (the uplink, the listen address) would otherwise be found wrong after the
// lease was already written to a store other nodes read.
import { formatIp, isMapped, parseIp } from '../lib/ip/index.ts';

/** An IPv4 address in Go's text form (--public-ip); mapped and IPv6 forms are refused. */
export function checkIpv4Flag(flag: string, v: string): string {
  const ip = parseIp(v);
  if (ip === null || ip.family !== 4) throw new Error(`--${flag} ${JSON.stringify(v)} is not an IPv4 address`);
  return formatIp(ip);
}

/** An IPv6 address in Go's text form (--public-ipv6); IPv4-mapped forms are refused. */
export function checkIpv6Flag(flag: string, v: string): string {
  const ip = parseIp(v);
  if (ip === null || ip.family !== 6 || isMapped(ip)) throw new Error(`--${flag} ${JSON.stringify(v)} is not an IPv6 address`);
  return formatIp(ip);
}

/** An address of either family (--healthz-ip, --iface-can-reach). */
export function checkIpFlag(flag: string, v: string): string {
  const ip = parseIp(v);
  if (ip === null) throw new Error(`--${flag} ${JSON.stringify(v)} is not an IP address`);
  return v;
}

/**
 * One --iface value: an address, or a Linux interface name (1-15 bytes, no '/', ':' or white space,
 * not "." or "..", as the kernel's dev_valid_name). A name that exists on no link is found out
 * when the uplink is chosen, still before the store is opened.
 */
export function checkIfaceFlag(v: string): string {
  if (parseIp(v) !== null) return v;
  const bytes = Buffer.byteLength(v);
  if (bytes === 0 || bytes > 15 || v === '.' || v === '..' || /[/:\s]/.test(v)) {
    throw new Error(`--iface ${JSON.stringify(v)} is neither an IP address nor an interface name (1-15 characters, no '/', ':' or spaces)`);
  }
  return v;
}

/** An http(s) URL with a host (--kube-api-url, each of --etcd-endpoints). */
export function checkUrlFlag(flag: string, v: string): string {
  let u: URL | undefined;
  try {
    u = new URL(v);
  } catch {
    u = undefined;
  }
  if (u === undefined || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.hostname === '') {
    throw new Error(`--${flag} ${JSON.stringify(v)} is not an http:// or https:// URL with a host`);
  }
  return v;
}

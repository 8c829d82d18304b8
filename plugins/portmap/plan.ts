// Pure planning: port mappings + the container's addresses -> the nft elements one attachment owns.
// No I/O; ADD adds these elements, CHECK looks for them, DEL deletes them (and those found by comment).
import type { Result } from '../../lib/cni/types.ts';
import { formatIp, normalizeIp } from '../../lib/ip/addr.ts';
import { canonicalCidr, formatCidr, parseCidr } from '../../lib/ip/cidr.ts';
import type { NftAtom } from '../../lib/netfilter/types.ts';
import type { PortMapping, PortmapConfig } from './config.ts';
import { noContainerIp } from './errors.ts';
import { PORTMAP_NAMES as N } from './names.ts';

/** One element to add: a DNAT map entry (with data) or a masquerade set entry. */
export interface PlannedElement {
  set: string;
  key: NftAtom[];
  data?: NftAtom[];
  /** The mapping that produced a DNAT entry (for conflict messages and conntrack flushing). */
  mapping?: PortMapping;
}

/** The container's first IPv4 and first IPv6 address (no prefix), as the reference portmap picks them. */
export interface ContainerIps {
  v4?: string;
  v6?: string;
  /** The pod's on-link subnet per family (from the result's prefix length), e.g. 10.244.1.0/24. */
  subnet4?: string;
  subnet6?: string;
}

/**
 * The container-side addresses of a result: ips whose interface is in a sandbox (or that name no
 * interface, as IPAM-only and 0.2.0 results do); the first of each family wins.
 */
export function containerIps(prev: Result): ContainerIps {
  const out: ContainerIps = {};
  for (const ip of prev.ips ?? []) {
    const iface = ip.interface === undefined ? undefined : prev.interfaces?.[ip.interface];
    if (iface !== undefined && (iface.sandbox === undefined || iface.sandbox === '')) continue;
    const cidr = parseCidr(ip.address);
    if (cidr === null) continue;
    const addr = normalizeIp(cidr.addr);
    const prefix = addr.family === cidr.addr.family ? cidr.prefix : Math.max(0, cidr.prefix - 96);
    // A host route (/32, /128) is listed by nft as a bare address: keep the two forms identical for CHECK.
    const subnet = prefix === (addr.family === 4 ? 32 : 128) ? formatIp(addr) : formatCidr(canonicalCidr({ addr, prefix }));
    if (addr.family === 4 && out.v4 === undefined) {
      out.v4 = formatIp(addr);
      out.subnet4 = subnet;
    } else if (addr.family === 6 && out.v6 === undefined) {
      out.v6 = formatIp(addr);
      out.subnet6 = subnet;
    }
  }
  return out;
}

const LOCALHOST4 = '127.0.0.1';

/** The elements for every mapping of `cfg` onto `ips` (deduplicated). Throws code 122 when a mapping has no target. */
export function planElements(cfg: PortmapConfig, ips: ContainerIps): PlannedElement[] {
  const out = new Map<string, PlannedElement>();
  const push = (e: PlannedElement): void => {
    const k = `${e.set}|${e.key.join(' . ')}`;
    if (!out.has(k)) out.set(k, e);
  };
  for (const m of cfg.mappings) {
    let mapped = 0;
    for (const fam of [4, 6] as const) {
      const pod = fam === 4 ? ips.v4 : ips.v6;
      if (pod === undefined || (m.family !== undefined && m.family !== fam)) continue;
      const subnet = (fam === 4 ? ips.subnet4 : ips.subnet6) ?? pod;
      mapped++;
      const data: NftAtom[] = [pod, m.containerPort];
      if (m.hostIP === undefined) push({ set: fam === 4 ? N.dnat4 : N.dnat6, key: [m.protocol, m.hostPort], data, mapping: m });
      else push({ set: fam === 4 ? N.hostDnat4 : N.hostDnat6, key: [m.hostIP, m.protocol, m.hostPort], data, mapping: m });
      const target: NftAtom[] = [pod, m.protocol, m.containerPort];
      if (cfg.snat) {
        // Hairpin: a pod of the same subnet (the pod itself included) reaching this hostPort would get
        // the reply straight over L2 from the pod address, never un-DNATed by the node's conntrack:
        // the node's address must be the source. (With br_netfilter the bridge would un-DNAT, without it not.)
        push({ set: fam === 4 ? N.snat4 : N.snat6, key: [subnet, ...target] });
        // 127.0.0.1 cannot be a source on the wire (net/ipv4/route.c drops martians): masquerade it.
        // IPv6 has no route_localnet: ip6_route_output never routes ::1 off the loopback device, so
        // [::1]:hostPort cannot be DNATed to a pod; node-local IPv6 clients use a node address instead.
        if (fam === 4 && (m.hostIP === undefined || m.hostIP.startsWith('127.'))) push({ set: N.snat4, key: [LOCALHOST4, ...target] });
      }
      if (cfg.masqAll) push({ set: fam === 4 ? N.masq4 : N.masq6, key: target });
    }
    if (mapped === 0) {
      const want = m.family === undefined ? 'an IPv4 or IPv6' : `an IPv${m.family}`;
      throw noContainerIp(`portmap: hostPort ${m.hostPort}/${m.protocol} needs ${want} container address`, `prevResult has ${describe(ips)}`);
    }
  }
  return [...out.values()];
}

function describe(ips: ContainerIps): string {
  const list = [ips.v4, ips.v6].filter((x) => x !== undefined);
  return list.length === 0 ? 'no container address' : `only ${list.join(', ')}`;
}

// route_localnet on the node interface that leads to the pod, so 127.0.0.1:hostPort can be DNATed.
import { existsSync } from 'node:fs';
import type { Result } from '../../lib/cni/types.ts';
import { cidrContains, parseCidr } from '../../lib/ip/cidr.ts';
import { parseIp } from '../../lib/ip/addr.ts';
import { Rtnl } from '../../lib/netlink/rtnl.ts';
import { ensureSysctl } from '../../lib/netns/sysctl.ts';

const IFNAME = /^[A-Za-z0-9_.:-]{1,15}$/;

/**
 * The node-side interface of the result: the first interface without a sandbox that exists in the
 * calling thread's (node) netns. Interface plugins list the one that routes to the pod first (bridge:
 * the bridge, then the veth; ptp: the host veth). Reading /proc/sys costs nothing next to opening
 * netlink, which loads the native addon (measured here: ~100 ms of a loaded machine's ADD).
 */
export function hostIfaceOf(prev: Result): string | undefined {
  for (const i of prev.interfaces ?? []) {
    if (i.sandbox !== undefined && i.sandbox !== '') continue;
    if (IFNAME.test(i.name) && i.name !== '.' && i.name !== '..' && existsSync(`/proc/sys/net/ipv4/conf/${i.name}`)) return i.name;
  }
  return undefined;
}

/**
 * The name of the interface the node's main table routes `podIp` out of (longest prefix wins), in the
 * calling thread's (node) netns; undefined when no route matches. The fallback for results that name
 * no host interface.
 */
export function findRouteIface(podIp: string): string | undefined {
  const ip = parseIp(podIp);
  if (ip === null) return undefined;
  const rtnl = Rtnl.open();
  try {
    let best: { prefix: number; oif: number } | undefined;
    for (const r of rtnl.listRoutes({ family: ip.family, table: 254 })) {
      const dst = parseCidr(r.dst);
      if (dst === null || r.oif === undefined || !cidrContains(dst, ip)) continue;
      if (best === undefined || dst.prefix > best.prefix) best = { prefix: dst.prefix, oif: r.oif };
    }
    return best === undefined ? undefined : (rtnl.getLinkByIndex(best.oif)?.name ?? undefined);
  } finally {
    rtnl.close();
  }
}

/**
 * Idempotent, in the node netns: sets net.ipv4.conf.<iface>.route_localnet=1 on the interface towards
 * the pod. Without it the output reroute after DNAT of 127.0.0.1 refuses a loopback source on a
 * non-loopback device (net/ipv4/route.c, ip_route_output_key_hash_rcu: IN_DEV_NET_ROUTE_LOCALNET);
 * the postrouting masquerade then replaces that source. Returns the interface, or undefined when none.
 */
export function ensureRouteLocalnet(prev: Result, podIp: string): string | undefined {
  const iface = hostIfaceOf(prev) ?? findRouteIface(podIp);
  if (iface === undefined) return undefined;
  ensureSysctl(`net/ipv4/conf/${iface}/route_localnet`, 1);
  return iface;
}

// route_localnet on the node interface that leads to the pod, so 127.0.0.1:hostPort can be DNATed.
import { cidrContains, parseCidr } from '../../lib/ip/cidr.ts';
import { parseIp } from '../../lib/ip/addr.ts';
import { Rtnl } from '../../lib/netlink/rtnl.ts';
import { ensureSysctl } from '../../lib/netns/sysctl.ts';

/**
 * The name of the interface the node's main table routes `podIp` out of (longest prefix wins), in the
 * calling thread's (node) netns; undefined when no route matches. The runtime gives us no interface
 * name we could trust for every chain (bridge, flannel, ptp), the routing table is the truth.
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
 * `podIp`. Without it the output reroute after DNAT of 127.0.0.1 refuses a loopback source on a
 * non-loopback device (net/ipv4/route.c, ip_route_output_key_hash_rcu: IN_DEV_NET_ROUTE_LOCALNET);
 * the postrouting masquerade then replaces that source. Returns the interface, or undefined when none.
 */
export function ensureRouteLocalnet(podIp: string): string | undefined {
  const iface = findRouteIface(podIp);
  if (iface === undefined) return undefined;
  ensureSysctl(`net/ipv4/conf/${iface}/route_localnet`, 1);
  return iface;
}

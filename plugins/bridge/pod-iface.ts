// The pod interface's L3 config in the pod netns (through a socket opened there): addresses, then routes.
import type { IpConfig, Route } from '../../lib/cni/types.ts';
import type { Rtnl } from '../../lib/netlink/rtnl.ts';
import { familyOfText } from '../../lib/ip/addr.ts';
import { broadcastOf } from '../../lib/ip/cidr.ts';

/** The gateway a route without `gw` uses: the first result IP of the route's family that has one. */
export function defaultGatewayFor(ips: readonly IpConfig[], dst: string): string | undefined {
  const fam = familyOfText(dst);
  return ips.find((ip) => ip.gateway !== undefined && familyOfText(ip.address) === fam)?.gateway;
}

/**
 * In the pod netns (pod's socket): adds each address to link `index` (IFA_F_NODAD unless DAD is wanted;
 * EEXIST tolerated so a retried ADD converges), then each route via its gateway, or the family's gateway.
 */
export function configurePodIface(pod: Rtnl, index: number, ips: readonly IpConfig[], routes: readonly Route[], enableDad: boolean): void {
  for (const ip of ips) {
    const brd = broadcastOf(ip.address);
    const req: Parameters<Rtnl['addAddr']>[0] = { index, cidr: ip.address, noDad: !enableDad, replace: true };
    if (brd !== undefined) req.broadcast = brd;
    pod.addAddr(req);
  }
  for (const r of routes) {
    const gw = r.gw ?? defaultGatewayFor(ips, r.dst);
    const spec: Parameters<Rtnl['addRoute']>[0] = { dst: r.dst, oif: index, replace: true };
    if (gw !== undefined) spec.gw = gw;
    if (r.mtu !== undefined) spec.mtu = r.mtu;
    if (r.advmss !== undefined) spec.advmss = r.advmss;
    if (r.priority !== undefined) spec.priority = r.priority;
    if (r.table !== undefined) spec.table = r.table;
    if (r.scope !== undefined) spec.scope = r.scope;
    pod.addRoute(spec);
  }
}

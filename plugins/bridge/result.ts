// The ADD result, shaped as the reference's: interfaces [bridge, host veth, pod iface], ips on index 2.
import type { Dns, Result, Route } from '../../lib/cni/types.ts';
import { familyOfText } from '../../lib/ip/addr.ts';
import type { Link } from '../../lib/netlink/link.ts';

/** Default routes the reference adds for isDefaultGateway: one per family with a gateway, unless IPAM already gave one. */
export function defaultRoutes(ipam: Result): Route[] {
  const out: Route[] = [];
  for (const v6 of [false, true]) {
    const gw = ipam.ips?.find((ip) => ip.gateway !== undefined && (familyOfText(ip.address) === 6) === v6)?.gateway;
    if (gw === undefined) continue;
    const dst = v6 ? '::/0' : '0.0.0.0/0';
    if ((ipam.routes ?? []).some((r) => r.dst === dst)) continue;
    out.push({ dst, gw });
  }
  return out;
}

/** Builds the result: the IPAM's ips (pointed at the pod interface) and routes, the config's dns. */
export function buildResult(o: { bridge: Link; host: Link; pod: Link; netns: string; ipam: Result; routes: Route[]; dns: Dns | undefined }): Result {
  return {
    interfaces: [
      { name: o.bridge.name, mac: o.bridge.mac },
      { name: o.host.name, mac: o.host.mac },
      { name: o.pod.name, mac: o.pod.mac, sandbox: o.netns },
    ],
    ips: (o.ipam.ips ?? []).map((ip) => ({ ...ip, interface: 2 })),
    routes: o.routes,
    // The reference reports the config's dns, not the IPAM's.
    dns: o.dns ?? {},
  };
}

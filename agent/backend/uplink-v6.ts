// The IPv6 side of the uplink for a dual-stack net-conf, in the node's netns: flannel looks the
// IPv6 address up on the same interface as the IPv4 one (LookupExtIface's dual-stack branch), the
// first global address unless --public-ipv6 names one.
import { formatIp, parseIp } from '../../lib/ip/index.ts';
import type { Addr, Rtnl } from '../../lib/netlink/index.ts';
import type { Uplink } from '../uplink.ts';
import type { UplinkV6 } from './backend.ts';

/** IFA_F_TENTATIVE / IFA_F_DADFAILED (linux/if_addr.h): not usable as a source yet, or never. */
const IFA_F_DADFAILED = 0x08;

/** Reads the uplink's IPv6 addresses and resolves the IPv6 side; throws naming the uplink when it has none. */
export function findUplinkV6(rtnl: Rtnl, uplink: Uplink, publicIpv6?: string): UplinkV6 {
  return chooseUplinkV6(rtnl.listAddrs({ family: 6, index: uplink.index }), uplink, publicIpv6);
}

/** Pure: the IPv6 side among the uplink's addresses (`publicIpv6` may lie elsewhere, as --public-ip may). */
export function chooseUplinkV6(addrs: readonly Addr[], uplink: Uplink, publicIpv6?: string): UplinkV6 {
  const own = addrs.filter((a) => a.family === 6 && a.index === uplink.index && a.scope === 0 && (a.flags & IFA_F_DADFAILED) === 0);
  let want: string | undefined;
  if (publicIpv6 !== undefined && publicIpv6 !== '') {
    const ip = parseIp(publicIpv6);
    if (ip === null || ip.family !== 6) throw new Error(`--public-ipv6 ${JSON.stringify(publicIpv6)} is not an IPv6 address`);
    want = formatIp(ip);
  }
  const match = want === undefined ? own[0] : own.find((a) => a.address === want);
  if (want === undefined && match === undefined) throw new Error(`EnableIPv6: the uplink ${uplink.name} has no global IPv6 address (set one, or --public-ipv6)`);
  return { publicIp: want ?? match?.address ?? '', cidr: (match ?? own[0])?.cidr ?? '', onUplink: match !== undefined };
}

// host-gw: no encapsulation, a route per remote lease via the peer's node address on the uplink
// (with IPv6 enabled, also the peer's IPv6 subnet via its PublicIPv6, as flannel's hostgw does).
// All nodes must share the uplink's L2 segment, so weftd refuses to start when its own public IP
// (or PublicIPv6) is not an address of the uplink (peers could not use it as a next hop).
import type { Link, Rtnl } from '../../lib/netlink/index.ts';
import type { BackendData } from '../lease/store.ts';
import type { DevIndexes } from '../reconcile/diff.ts';
import type { Uplink } from '../uplink.ts';
import type { Backend, UplinkV6 } from './backend.ts';

/** The host-gw backend (node netns). */
export class HostGwBackend implements Backend {
  readonly type = 'host-gw' as const;

  /** `ipv4` false: an IPv6-only net-conf, whose leases carry no IPv4 next hop to check. */
  constructor(private readonly uplink: Uplink, private readonly ipv6?: UplinkV6, ipv4 = true) {
    if (ipv4 && !uplink.publicIpOnUplink) {
      throw new Error(`host-gw: the node address ${uplink.publicIp} is not on the uplink ${uplink.name} (${uplink.cidr}); peers could not route to it`);
    }
    if (ipv6 !== undefined && !ipv6.onUplink) {
      throw new Error(`host-gw: the node's PublicIPv6 ${ipv6.publicIp} is not on the uplink ${uplink.name} (${ipv6.cidr}); peers could not route to it`);
    }
  }

  /** host-gw advertises nothing beyond the public IP. */
  backendData(): BackendData {
    return {};
  }

  /** Nothing beyond PublicIPv6 either; undefined when IPv6 is off. */
  backendV6Data(): BackendData | undefined {
    return this.ipv6 === undefined ? undefined : {};
  }

  /** No encapsulation: pods get the uplink's MTU. */
  podMtu(): number {
    return this.uplink.mtu;
  }

  /** Nothing to create; re-reads the uplink index in case the device was replaced. */
  ensureLocal(rtnl: Rtnl): DevIndexes {
    const link = rtnl.getLink(this.uplink.name);
    if (!link) throw new Error(`uplink ${this.uplink.name} is gone`);
    return { uplink: link.index };
  }

  /** Only the uplink matters (its flaps flush our routes). */
  watchesLink(link: Link): boolean {
    return link.name === this.uplink.name;
  }
}

// The backend seen by weftd's reconcile loop: what it advertises in the lease, the MTU pods get,
// and the local device it keeps in place. Backends run in the node's netns (the Rtnl socket's).
import type { Link, Rtnl } from '../../lib/netlink/index.ts';
import type { BackendData, Lease } from '../lease/store.ts';
import type { DevIndexes } from '../reconcile/diff.ts';
import type { Metrics } from '../metrics.ts';

/** The IPv6 side of the uplink, given to the backends when the net-conf enables IPv6. */
export interface UplinkV6 {
  /** PublicIPv6: the address peers send to, in canonical text form. */
  publicIp: string;
  /** The uplink's IPv6 address with its prefix ("2001:db8:2::11/64"); its prefix decides "same L2". */
  cidr: string;
  /** True when publicIp is an address of the uplink (host-gw requires it). */
  onUplink: boolean;
}

/** One backend instance for the life of weftd. */
export interface Backend {
  readonly type: 'vxlan' | 'host-gw' | 'udp';
  /** BackendData for this node's lease (vxlan: VNI and VtepMAC). */
  backendData(): BackendData;
  /** BackendV6Data for the IPv6 side of the lease (vxlan: VNI and the MAC of flannel-v6.<VNI>); undefined when IPv6 is off. */
  backendV6Data?(): BackendData | undefined;
  /** Optional, before the lease is taken: keeps a matching device already on the node (vxlan: flanneld's VTEP and its MAC). */
  adoptLocal?(rtnl: Rtnl): void;
  /** FLANNEL_MTU: the MTU pods must use on this backend. */
  podMtu(): number;
  /** Idempotent: makes the local device(s) exist for `own` (both families when it has an IPv6 subnet) and returns the indexes routes use. */
  ensureLocal(rtnl: Rtnl, own: Lease): DevIndexes;
  /** True when a link event concerns a device this backend relies on (VTEP, uplink). */
  watchesLink(link: Link): boolean;
  /** Optional: the lease table after each pass (udp: the forwarder's peers live in the process, not the kernel). */
  syncLeases?(leases: readonly Lease[], own: Lease): void;
  /** Optional: declares the backend's own metrics in weftd's registry. */
  attachMetrics?(m: Metrics): void;
  /** Optional: releases what the backend holds in this process (udp: forwarder, TUN and socket fds). */
  stop?(): void;
}

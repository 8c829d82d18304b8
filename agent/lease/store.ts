// The lease store seen by the rest of weftd: one interface, a file implementation (single-machine
// clusters, `--store file:DIR`) and an etcd v3 one (`--etcd-endpoints`), both with flannel's
// lease format so that a node can migrate between flannel and weftd.
//
// How the agent uses it (both stores behave the same):
//   const lease = await store.acquire({ publicIp, backendType: 'vxlan', backendData: { VNI: 1, VtepMAC } , preferredSubnet });
//     -> takes back this node's lease when one with the same PublicIP exists (and fits the
//        net-conf), else the preferred subnet (the one in the old subnet.env) when it is free,
//        else a random free /SubnetLen among the first 100 free ones (flannel's rule).
//        From then on the store keeps the lease alive by itself (renewal before expiry) until
//        release() or close(); renew() exists for callers that want to force it.
//   store.onLost(({ lost, current }) => ...)  -> the store noticed its own lease vanished (deleted
//        by hand, expired, etcd data wiped) and registered again; `current` may be a different
//        subnet, in which case the agent rewrites subnet.env and re-programs its devices.
//   const { leases, revision } = await store.list();
//   const w = store.watch(revision, (ev) => reconcile(ev));   // diffs after `revision`
//        Events are 'added' (new lease, or its PublicIP/BackendType/BackendData changed) and
//        'removed' (deleted or expired). Renewals that change nothing else are not events.
//        The store recovers from missed events on its own (re-list and diff after etcd
//        compaction, reconnects or fs.watch gaps), so a watcher sees a consistent sequence.
//        The list includes this node's own lease; callers skip it by subnet.
//   w.stop(); await store.close();   // close() does NOT release the lease: a restart takes it back.
import type { KubeApi } from '../kube/api.ts';
import type { NetConf } from '../config/net-conf.ts';

/** BackendData as flannel writes it; vxlan sets VNI and VtepMAC, host-gw nothing. Unknown keys are kept. */
export interface BackendData {
  VNI?: number;
  VtepMAC?: string;
  [key: string]: unknown;
}

/**
 * One node's lease. `subnet` in network form ("10.244.3.0/24"); `expiration` in ms since the epoch, 0 when unknown (remote etcd leases).
 * The IPv6 fields are flannel's dual-stack ones (Lease.IPv6Subnet, LeaseAttrs.PublicIPv6 / BackendV6Data); absent on an IPv4-only lease.
 */
export interface Lease {
  subnet: string;
  publicIp: string;
  backendType: string;
  backendData: BackendData;
  expiration: number;
  /** The node's IPv6 subnet in network form ("fd00:10:244:3::/64"). */
  ipv6Subnet?: string;
  /** The IPv6 address peers send to (flannel's PublicIPv6). */
  publicIpv6?: string;
  /** BackendData of the IPv6 side (vxlan: the VNI and the MAC of flannel-v6.<VNI>). */
  backendV6Data?: BackendData;
}

/** What a node asks for; preferredSubnet is the subnet remembered in subnet.env from an earlier run. */
export interface AcquireOptions {
  publicIp: string;
  backendType: string;
  backendData: BackendData;
  preferredSubnet?: string;
  /** Dual stack: the IPv6 side of the lease (all three set together, only when the net-conf enables IPv6). */
  publicIpv6?: string;
  backendV6Data?: BackendData;
  preferredIpv6Subnet?: string;
}

/** A change of the lease table. */
export interface LeaseEvent {
  type: 'added' | 'removed';
  lease: Lease;
}

/** A running watch; stop() is idempotent. */
export interface Watch {
  stop(): void;
}

/** Reported once the store has noticed its own lease was gone and has registered again. */
export interface LeaseLostEvent {
  lost: Lease;
  current: Lease;
}

/** The lease table of the cluster (see the module comment for the life cycle). */
export interface LeaseStore {
  /** The network configuration leases are allocated from. */
  readonly netConf: NetConf;
  /** Takes this node's lease (previous one, preferred subnet, or a random free one) and keeps it alive. */
  acquire(opts: AcquireOptions): Promise<Lease>;
  /** Extends the lease now (also re-creates it if it vanished); returns it with the new expiration. */
  renew(lease: Lease): Promise<Lease>;
  /** Deletes the lease (only if it still belongs to lease.publicIp) and stops keeping it alive. */
  release(lease: Lease): Promise<void>;
  /** All live (unexpired) leases and the revision they are current at. */
  list(): Promise<{ leases: Lease[]; revision: number }>;
  /** Calls onEvent for every change after `fromRevision` (take it from list()); onError for problems it recovers from. */
  watch(fromRevision: number, onEvent: (ev: LeaseEvent) => void, onError?: (err: Error) => void): Watch;
  /** Registers a callback for "own lease lost and re-registered"; returns an unsubscribe function. */
  onLost(cb: (ev: LeaseLostEvent) => void): () => void;
  /** Stops timers, watches and connections; the lease stays in the store (a restart takes it back). */
  close(): Promise<void>;
  /** The kube store's API connection and watch cache (--kube-subnet-mgr), for weftd's other kube controllers to share; absent for file and etcd. */
  readonly kubeApi?: KubeApi;
}

/** Thrown by acquire when no free subnet is left between SubnetMin and SubnetMax (or, dual stack, IPv6SubnetMin and IPv6SubnetMax). */
export class OutOfSubnetsError extends Error {
  constructor(conf: NetConf) {
    if (!conf.enableIPv4) {
      super(`no free /${conf.ipv6SubnetLen ?? 0} IPv6 subnet left in ${conf.ipv6Network ?? ''} between ${conf.ipv6SubnetMin ?? ''} and ${conf.ipv6SubnetMax ?? ''}`);
      this.name = 'OutOfSubnetsError';
      return;
    }
    const v4 = `no free /${conf.subnetLen} subnet left in ${conf.network} between ${conf.subnetMin} and ${conf.subnetMax}`;
    const v6 = conf.enableIPv6 && conf.ipv6Network !== undefined
      ? ` or no free /${conf.ipv6SubnetLen ?? 0} IPv6 subnet in ${conf.ipv6Network} between ${conf.ipv6SubnetMin ?? ''} and ${conf.ipv6SubnetMax ?? ''}`
      : '';
    super(v4 + v6);
    this.name = 'OutOfSubnetsError';
  }
}

/**
 * The IPv4 side of an IPv6-only lease, as flannel leaves it (its zero IP4Net, key "0.0.0.0-0&..."):
 * subnet "0.0.0.0/0" and PublicIP "0.0.0.0". Such a lease is told apart by its IPv6 subnet.
 */
export const NO_IPV4_SUBNET = '0.0.0.0/0';
export const NO_IPV4_ADDRESS = '0.0.0.0';

/** True for an IPv6-only lease (EnableIPv4 false): no IPv4 subnet, an IPv6 one. */
export function isIpv6Only(l: Pick<Lease, 'subnet' | 'ipv6Subnet'>): boolean {
  return (l.subnet === NO_IPV4_SUBNET || l.subnet === '') && l.ipv6Subnet !== undefined && l.ipv6Subnet !== '';
}

/**
 * What tells leases apart in the stores' and weftd's tables: the IPv4 subnet, or the IPv6 one on an
 * IPv6-only lease (all of which share the subnet "0.0.0.0/0", so keying by it would merge them).
 */
export function leaseKey(l: Pick<Lease, 'subnet' | 'ipv6Subnet'>): string {
  return isIpv6Only(l) ? l.ipv6Subnet as string : l.subnet;
}

/** The lease's subnets for logs and errors: "10.244.3.0/24", "fd00:10:244:3::/64" (IPv6-only), or both. */
export function leaseName(l: Pick<Lease, 'subnet' | 'ipv6Subnet'>): string {
  if (isIpv6Only(l)) return l.ipv6Subnet as string;
  return l.ipv6Subnet !== undefined && l.ipv6Subnet !== '' ? `${l.subnet}+${l.ipv6Subnet}` : l.subnet;
}

/** True when two leases carry the same node data, both families (what makes an 'added' event worth sending). */
export function sameLeaseData(a: Lease, b: Lease): boolean {
  return a.subnet === b.subnet && a.publicIp === b.publicIp && a.backendType === b.backendType &&
    JSON.stringify(a.backendData) === JSON.stringify(b.backendData) &&
    a.ipv6Subnet === b.ipv6Subnet && a.publicIpv6 === b.publicIpv6 &&
    JSON.stringify(a.backendV6Data) === JSON.stringify(b.backendV6Data);
}

// `--kube-subnet-mgr`: leases are Kubernetes Nodes, as with flanneld. This node's subnet is its
// spec.podCIDR(s) (assigned by kube-controller-manager; never allocated here); its backend data goes
// into annotations, written with a strategic-merge PATCH of nodes/<name>/status, followed by the
// NetworkUnavailable=False condition flanneld sets. Dual stack: the IPv6 entry of spec.podCIDRs and
// the public-ipv6 / backend-v6-data annotations, when acquire() is given the IPv6 attributes.
// Peers come from the Node informer of the shared watch cache (agent/kube/watch-cache.ts: one list,
// a watch with bookmarks resumed when the server ends it, a re-list on 410 Gone, a broken connection
// or 150 s of silence), the same informer the Services and NetworkPolicy controllers read. No polling.
import type { NetConf } from '../../config/net-conf.ts';
import { type KubeApi, openKubeApi } from '../../kube/api.ts';
import type { KubeConn } from '../../kube/config.ts';
import type { CacheEvent, KubeObject } from '../../kube/watch-cache.ts';
import { createAgentLog } from '../../log.ts';
import { type KubeNode, applyPublicIpOverwrite, leaseAnnotations, nodePodCidr, nodeToLease, subnetInNetwork } from './node-lease.ts';
import { type NodeNameSource, resolveNodeName } from '../../kube/node-name.ts';
import { LeaseTable } from '../lease-table.ts';
import { type AcquireOptions, type Lease, type LeaseEvent, type LeaseStore, type Watch, NO_IPV4_ADDRESS, NO_IPV4_SUBNET } from '../store.ts';
import { isoNow } from '../../../lib/time/format.ts';

/** Options of the kube store: a connection of its own (conn), or weftd's shared one (api). */
export type KubeStoreOptions = NodeNameSource & {
  annotationPrefix: string;
  netConf: NetConf;
  onError?: (err: Error) => void;
  /** Longest wait between re-list attempts while the API server is unreachable; default 5 s (own connection only). */
  maxBackoffMs?: number;
  /** A watch silent this long is taken for dead and re-listed (the API server sends a bookmark every minute); default 150 s (own connection only). */
  watchIdleMs?: number;
} & ({ conn: KubeConn; api?: undefined } | { api: KubeApi; conn?: undefined });

const NODES = '/api/v1/nodes';
/** kube-apiserver's watch cache sends bookmarks about once a minute (defaultBookmarkFrequency): 2.5 of them missed means a dead connection. */
const WATCH_IDLE_MS = 150_000;

type NodeObject = KubeNode & KubeObject;

/** Lease store over the Kubernetes API (see the module comment). */
export class KubeLeaseStore implements LeaseStore {
  readonly netConf: NetConf;
  /** The API connection and watch cache this store reads through (shared with weftd's other controllers). */
  readonly kubeApi: KubeApi;
  private readonly ownsApi: boolean;
  private readonly table = new LeaseTable();
  /** Node name -> subnets of its lease, to withdraw a node whose annotations or podCIDR went away. */
  private readonly byNode = new Map<string, Pick<Lease, 'subnet' | 'ipv6Subnet'>>();
  private readonly errorSinks = new Set<(err: Error) => void>();
  private unsubscribe: (() => void) | undefined;
  private nodeName: string | undefined;

  constructor(private readonly o: KubeStoreOptions) {
    this.netConf = o.netConf;
    this.ownsApi = o.api === undefined;
    // Every failure of an own cache goes to onError (below), so its log is never written to.
    this.kubeApi = o.api ?? openKubeApi(o.conn, {
      log: createAgentLog('error', () => undefined), onError: (_resource, e) => this.report(e),
      idleMs: o.watchIdleMs ?? WATCH_IDLE_MS, maxBackoffMs: o.maxBackoffMs ?? 5000,
    });
  }

  private get client(): KubeApi['client'] {
    return this.kubeApi.client;
  }

  /**
   * Reads this node's podCIDR(s) and publishes the backend annotations when they differ; the
   * public-ip(v6)-overwrite annotations replace the published address (node-lease.ts). The lease
   * returned keeps the node's own address, as flanneld's does.
   */
  async acquire(opts: AcquireOptions): Promise<Lease> {
    this.nodeName ??= await resolveNodeName(this.o, (m, p) => this.client.call(m, p));
    const name = JSON.stringify(this.nodeName);
    const path = `${NODES}/${encodeURIComponent(this.nodeName)}`;
    const node = await this.client.call('GET', path) as KubeNode;
    const v6only = !this.netConf.enableIPv4;
    if (v6only && opts.publicIpv6 === undefined) throw new Error('net-conf: EnableIPv4 false (IPv6-only) needs the node\'s IPv6 address (--public-ipv6, or an IPv6 address on the uplink)');
    const subnet = v6only ? NO_IPV4_SUBNET : nodePodCidr(node, 4);
    if (subnet === null) throw new Error(`node ${name} pod cidr not assigned`);
    if (!v6only && !subnetInNetwork(subnet, this.netConf.network)) throw new Error(`node ${name} pod cidr ${subnet} is not in the net-conf Network ${this.netConf.network}`);
    const v6 = opts.publicIpv6 !== undefined ? this.ipv6Side(node, name) : undefined;
    const published = applyPublicIpOverwrite(node, this.o.annotationPrefix, opts);
    const want = leaseAnnotations(this.o.annotationPrefix, published, v6only);
    const have = node.metadata?.annotations ?? {};
    if (Object.entries(want).some(([k, v]) => have[k] !== v)) {
      await this.client.call('PATCH', `${path}/status`, { metadata: { annotations: want } }, 'application/strategic-merge-patch+json');
    }
    const now = isoNow();
    await this.client.call('PATCH', `${path}/status`, {
      status: { conditions: [{ type: 'NetworkUnavailable', status: 'False', reason: 'FlannelIsUp', message: 'weftd is running on this node', lastTransitionTime: now, lastHeartbeatTime: now }] },
    }, 'application/strategic-merge-patch+json');
    const lease: Lease = { subnet, publicIp: v6only ? NO_IPV4_ADDRESS : opts.publicIp, backendType: opts.backendType, backendData: { ...opts.backendData }, expiration: 0 };
    if (v6 !== undefined) Object.assign(lease, { ipv6Subnet: v6, publicIpv6: opts.publicIpv6, backendV6Data: { ...opts.backendV6Data } });
    return lease;
  }

  /** The node's IPv6 podCIDR, checked against the net-conf's IPv6Network (dual stack). */
  private ipv6Side(node: KubeNode, name: string): string {
    const subnet = nodePodCidr(node, 6);
    if (subnet === null) throw new Error(`node ${name} has no IPv6 pod cidr in spec.podCIDRs while the net-conf enables IPv6`);
    // The net-conf's IPv6 fields exist only when it enables IPv6 (net-conf.ts).
    const network = (this.netConf as { ipv6Network?: string }).ipv6Network;
    if (network !== undefined && !subnetInNetwork(subnet, network)) throw new Error(`node ${name} IPv6 pod cidr ${subnet} is not in the net-conf IPv6Network ${network}`);
    return subnet;
  }

  /** Node leases do not expire (the node object is the lease). */
  renew(lease: Lease): Promise<Lease> {
    return Promise.resolve(lease);
  }

  /** The annotations stay, as with flanneld: the node keeps its podCIDR whether or not weftd runs. */
  release(): Promise<void> {
    return Promise.resolve();
  }

  /** Follows the Node informer (started here if nobody did) and returns the leases once it has listed. */
  async list(): Promise<{ leases: Lease[]; revision: number }> {
    const nodes = this.kubeApi.cache.informer<NodeObject>({ path: NODES });
    if (this.unsubscribe === undefined) {
      this.unsubscribe = nodes.subscribe((ev) => this.onCacheEvent(ev));
      for (const n of nodes.list()) this.onNode(n.metadata.name, n);
    }
    await nodes.synced;
    return this.table.snapshot();
  }

  /** Diffs after fromRevision (from list()). */
  watch(fromRevision: number, onEvent: (ev: LeaseEvent) => void, onError?: (err: Error) => void): Watch {
    const w = this.table.watch(fromRevision, onEvent);
    if (onError) this.errorSinks.add(onError);
    return { stop: () => { w.stop(); if (onError) this.errorSinks.delete(onError); } };
  }

  /** Never fires: a node's lease cannot be lost while the node exists. */
  onLost(): () => void {
    return () => undefined;
  }

  /** Stops following the nodes (and closes an own connection); the annotations stay. */
  close(): Promise<void> {
    this.unsubscribe?.();
    this.table.clearWatchers();
    if (this.ownsApi) this.kubeApi.close();
    return Promise.resolve();
  }

  private report(err: Error): void {
    this.o.onError?.(err);
    for (const s of this.errorSinks) s(err);
  }

  private onCacheEvent(ev: CacheEvent<NodeObject>): void {
    if (ev.type === 'synced') return;
    this.onNode(ev.obj.metadata.name, ev.type === 'deleted' ? null : ev.obj);
  }

  /** A node's current state (null: deleted) into the table: its old lease withdrawn when it changed or went away. */
  private onNode(name: string, node: NodeObject | null): void {
    const old = this.byNode.get(name);
    const lease = node === null ? null : nodeToLease(node, this.o.annotationPrefix, !this.netConf.enableIPv4);
    if (old !== undefined && (lease === null || old.subnet !== lease.subnet || old.ipv6Subnet !== lease.ipv6Subnet)) {
      this.byNode.delete(name);
      this.table.apply({ type: 'removed', lease: { ...old, publicIp: '', backendType: '', backendData: {}, expiration: 0 } });
    }
    if (lease) {
      this.byNode.set(name, { subnet: lease.subnet, ...(lease.ipv6Subnet !== undefined ? { ipv6Subnet: lease.ipv6Subnet } : {}) });
      this.table.apply({ type: 'added', lease });
    }
  }
}

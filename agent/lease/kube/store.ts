// `--kube-subnet-mgr`: leases are Kubernetes Nodes, as with flanneld. This node's subnet is its
// spec.podCIDR(s) (assigned by kube-controller-manager; never allocated here); its backend data goes
// into annotations, written with a strategic-merge PATCH of nodes/<name>/status, followed by the
// NetworkUnavailable=False condition flanneld sets. Dual stack: the IPv6 entry of spec.podCIDRs and
// the public-ipv6 / backend-v6-data annotations, when acquire() is given the IPv6 attributes.
// Peers come from one list of all nodes, then a watch from the list's resourceVersion (bookmarks keep it fresh); the server ending the watch
// resumes it, a 410 Gone (version too old), a broken connection or one silent for 150 s (no
// bookmark: a dead peer) re-lists and diffs. No polling.
import type { NetConf } from '../../config/net-conf.ts';
import { KubeClient } from '../../kube/client.ts';
import type { KubeConn } from '../../kube/config.ts';
import { type KubeNode, leaseAnnotations, nodePodCidr, nodeToLease, subnetInNetwork } from './node-lease.ts';
import { type NodeNameSource, resolveNodeName } from '../../kube/node-name.ts';
import { LeaseTable } from '../lease-table.ts';
import type { AcquireOptions, Lease, LeaseEvent, LeaseStore, Watch } from '../store.ts';
import { isoNow } from '../../../lib/time/format.ts';

/** Options of the kube store. */
export interface KubeStoreOptions extends NodeNameSource {
  conn: KubeConn;
  annotationPrefix: string;
  netConf: NetConf;
  onError?: (err: Error) => void;
  /** Longest wait between re-list attempts while the API server is unreachable; default 5 s. */
  maxBackoffMs?: number;
  /** A watch silent this long is taken for dead and re-listed (the API server sends a bookmark every minute); default 150 s. */
  watchIdleMs?: number;
}

interface WatchEvent {
  type?: string;
  object?: KubeNode & { code?: number; message?: string };
}

const NODES = '/api/v1/nodes';
/** kube-apiserver's watch cache sends bookmarks about once a minute (defaultBookmarkFrequency): 2.5 of them missed means a dead connection. */
const WATCH_IDLE_MS = 150_000;

/** Lease store over the Kubernetes API (see the module comment). */
export class KubeLeaseStore implements LeaseStore {
  readonly netConf: NetConf;
  private readonly client: KubeClient;
  private readonly table = new LeaseTable();
  /** Node name -> subnet of its lease, to withdraw a node whose annotations or podCIDR went away. */
  private readonly byNode = new Map<string, string>();
  private readonly errorSinks = new Set<(err: Error) => void>();
  private resourceVersion = '';
  private current: { abort(): void } | undefined;
  private closed = false;
  private backoffMs = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private nodeName: string | undefined;

  constructor(private readonly o: KubeStoreOptions) {
    this.netConf = o.netConf;
    this.client = new KubeClient(o.conn);
  }

  /** Reads this node's podCIDR(s) and publishes the backend annotations when they differ. */
  async acquire(opts: AcquireOptions): Promise<Lease> {
    this.nodeName ??= await resolveNodeName(this.o, (m, p) => this.client.call(m, p));
    const name = JSON.stringify(this.nodeName);
    const path = `${NODES}/${encodeURIComponent(this.nodeName)}`;
    const node = await this.client.call('GET', path) as KubeNode;
    const subnet = nodePodCidr(node, 4);
    if (subnet === null) throw new Error(`node ${name} pod cidr not assigned`);
    if (!subnetInNetwork(subnet, this.netConf.network)) throw new Error(`node ${name} pod cidr ${subnet} is not in the net-conf Network ${this.netConf.network}`);
    const v6 = opts.publicIpv6 !== undefined ? this.ipv6Side(node, name) : undefined;
    const want = leaseAnnotations(this.o.annotationPrefix, opts);
    const have = node.metadata?.annotations ?? {};
    if (Object.entries(want).some(([k, v]) => have[k] !== v)) {
      await this.client.call('PATCH', `${path}/status`, { metadata: { annotations: want } }, 'application/strategic-merge-patch+json');
    }
    const now = isoNow();
    await this.client.call('PATCH', `${path}/status`, {
      status: { conditions: [{ type: 'NetworkUnavailable', status: 'False', reason: 'FlannelIsUp', message: 'weftd is running on this node', lastTransitionTime: now, lastHeartbeatTime: now }] },
    }, 'application/strategic-merge-patch+json');
    const lease: Lease = { subnet, publicIp: opts.publicIp, backendType: opts.backendType, backendData: { ...opts.backendData }, expiration: 0 };
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

  /** Lists the nodes, diffs them into the table and starts the watch. */
  async list(): Promise<{ leases: Lease[]; revision: number }> {
    await this.relist();
    this.startWatch();
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

  /** Ends the watch and closes connections; the annotations stay. */
  close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.current?.abort();
    this.table.clearWatchers();
    this.client.close();
    return Promise.resolve();
  }

  private report(err: Error): void {
    this.o.onError?.(err);
    for (const s of this.errorSinks) s(err);
  }

  private async relist(): Promise<void> {
    const res = await this.client.call('GET', NODES) as { metadata?: { resourceVersion?: string }; items?: KubeNode[] };
    const leases: Lease[] = [];
    this.byNode.clear();
    for (const n of res.items ?? []) {
      const l = nodeToLease(n, this.o.annotationPrefix);
      if (l && n.metadata?.name) {
        leases.push(l);
        this.byNode.set(n.metadata.name, l.subnet);
      }
    }
    this.table.applySnapshot(leases);
    this.resourceVersion = res.metadata?.resourceVersion ?? '';
  }

  private startWatch(): void {
    if (this.closed) return;
    const q = `?watch=true&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(this.resourceVersion)}`;
    let gone = false;
    const w = this.client.watch(NODES + q, (raw) => {
      const ev = raw as WatchEvent;
      if (ev.type === 'ERROR') {
        gone = ev.object?.code === 410;
        if (!gone) this.report(new Error(`kube watch error: ${ev.object?.message ?? JSON.stringify(ev.object)}`));
        w.abort();
        return;
      }
      this.onEvent(ev);
      this.backoffMs = 0;
    }, this.o.watchIdleMs ?? WATCH_IDLE_MS);
    this.current = w;
    void w.done.then((end) => {
      if (this.closed || this.current !== w) return;
      if (gone || end.error) {
        if (end.error && !gone) this.report(new Error(`kube watch broken, re-listing: ${end.error.message}`, { cause: end.error }));
        this.retry();
      } else {
        this.startWatch(); // the server's watch timeout: resume from the last resourceVersion
      }
    });
  }

  /** Re-lists then watches again; waits longer after each failure (up to maxBackoffMs). */
  private retry(): void {
    if (this.closed) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(Math.max(this.backoffMs * 2, 250), this.o.maxBackoffMs ?? 5000);
    this.retryTimer = setTimeout(() => {
      this.relist().then(() => this.startWatch(), (e: unknown) => {
        this.report(new Error(`kube re-list failed: ${(e as Error).message}`, { cause: e }));
        this.retry();
      });
    }, delay);
  }

  private onEvent(ev: WatchEvent): void {
    const node = ev.object;
    const rv = node?.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    const name = node?.metadata?.name;
    if (!node || !name || ev.type === 'BOOKMARK') return;
    const old = this.byNode.get(name);
    const lease = ev.type === 'DELETED' ? null : nodeToLease(node, this.o.annotationPrefix);
    if (old !== undefined && old !== lease?.subnet) {
      this.byNode.delete(name);
      this.table.apply({ type: 'removed', lease: { subnet: old, publicIp: '', backendType: '', backendData: {}, expiration: 0 } });
    }
    if (lease) {
      this.byNode.set(name, lease.subnet);
      this.table.apply({ type: 'added', lease });
    }
  }
}

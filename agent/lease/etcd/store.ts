// `--etcd-endpoints`: leases in etcd v3 with flannel's layout (<prefix>/subnets/10.244.3.0-24 holding
// flannel's lease JSON), each created only if its key does not exist (txn on create_revision == 0),
// bound to an etcd lease (TTL 24 h) that is kept alive before it expires. One internal etcd watch
// per store feeds the lease table, starting at the last list's revision + 1; compaction and watch
// errors lead to a re-list and diff, reconnects and a periodic timer re-list too (that also notices
// etcd having lost its data: our own key then gets re-created and onLost fires). etcd is reached
// through an EtcdApi: the JSON gateway client, or the gRPC one where the gateway cannot serve.
import type { NetConf } from '../../config/net-conf.ts';
import { checkAcquireFamilies, leaseFromPlan, planAcquire } from '../allocate.ts';
import type { EtcdApi, EtcdKeyValue, EtcdWatch } from './api.ts';
import { DEFAULT_ETCD_PREFIX, type EtcdSecurity, etcdKeys, kvToLease } from './client.ts';
import { type EtcdConnectOptions, connectEtcd } from './connect.ts';
import { formatLeaseAttrs, formatSubnetKey, parseLeaseKey } from '../lease-json.ts';
import { LeaseTable } from '../lease-table.ts';
import { OwnLeaseKeeper } from '../own-lease.ts';
import { type AcquireOptions, type Lease, type LeaseEvent, type LeaseLostEvent, type LeaseStore, type Watch, OutOfSubnetsError, leaseKey, leaseName } from '../store.ts';

/** Options of the etcd store. Without netConf, <prefix>/config is read (flannel's behaviour). */
export interface EtcdStoreOptions {
  endpoints: string[];
  prefix?: string;
  netConf?: NetConf;
  /** TLS and password auth (--etcd-cafile ... --etcd-password). */
  security?: EtcdSecurity;
  /** etcd lease TTL; flannel uses 24 h. */
  ttlSeconds?: number;
  /** See OwnLeaseKeeper. */
  renewMarginMs?: number;
  /** Period of the safety re-list (missed events, etcd data loss); default 30 s. */
  resyncMs?: number;
  onError?: (err: Error) => void;
  /** See EtcdConnectOptions. */
  loadGrpc?: NonNullable<EtcdConnectOptions['loadGrpc']>;
}

/** Connects to etcd and returns the store; reads the net-conf from etcd unless one is given. */
export async function openEtcdLeaseStore(opts: EtcdStoreOptions): Promise<EtcdLeaseStore> {
  const { client, netConf } = await connectEtcd(opts);
  return new EtcdLeaseStore(client, netConf, opts);
}

/** flannel retries allocation this often when another node wins the race for a subnet. */
const RACE_RETRIES = 10;
const STALE_LIST_RETRIES = 5; // lists in a row that may lag a watch event before one is applied anyway

/** Lease store over etcd v3 (see the module comment). Create it with openEtcdLeaseStore. */
export class EtcdLeaseStore implements LeaseStore {
  private readonly subnets: string;
  private readonly ttl: number;
  private readonly resyncMs: number;
  private readonly onError: (err: Error) => void;
  private readonly table = new LeaseTable();
  private readonly keeper: OwnLeaseKeeper;
  private etcdLeaseId: string | undefined;
  private watcher: EtcdWatch | undefined;
  private snapRev = 0; // etcd revision of the last list applied; older watch events are skipped
  private seenRev = 0; // highest etcd revision seen; a list below it means etcd lost its data
  private timer: NodeJS.Timeout | undefined;
  private resyncing: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly client: EtcdApi, readonly netConf: NetConf, opts: EtcdStoreOptions) {
    this.subnets = etcdKeys(opts.prefix ?? DEFAULT_ETCD_PREFIX).subnets;
    this.ttl = opts.ttlSeconds ?? 24 * 3600;
    this.resyncMs = opts.resyncMs ?? 30_000;
    this.onError = opts.onError ?? (() => undefined);
    this.keeper = new OwnLeaseKeeper({ ttlMs: this.ttl * 1000, ...(opts.renewMarginMs !== undefined ? { renewMarginMs: opts.renewMarginMs } : {}), renew: (l) => this.renew(l), reacquire: (o) => this.acquireOnce(o), onError: this.onError });
  }

  /** Takes this node's lease (see LeaseStore) and keeps its etcd lease alive. */
  async acquire(opts: AcquireOptions): Promise<Lease> {
    const { lease, revision } = await this.acquireOnce(opts);
    this.keeper.hold(lease, opts, revision);
    this.start();
    return lease;
  }

  private async acquireOnce(opts: AcquireOptions): Promise<{ lease: Lease; revision: number }> {
    checkAcquireFamilies(this.netConf, opts);
    for (let i = 0; i < RACE_RETRIES; i++) {
      const got = await this.tryAcquire(opts);
      if (got) return got;
    }
    throw new Error(`etcd: gave up acquiring a subnet after ${RACE_RETRIES} races with other nodes`);
  }

  private async tryAcquire(opts: AcquireOptions): Promise<{ lease: Lease; revision: number } | null> {
    const { kvs } = await this.fetch();
    const plan = planAcquire(this.netConf, [...kvs.values()].map((e) => e.lease), opts, () => true);
    if (plan === null) throw new OutOfSubnetsError(this.netConf);
    for (const s of plan.stale) await this.client.delete(this.key(s));
    const lease = leaseFromPlan(plan, opts, 0);
    const key = this.key(lease);
    const { id, ttl } = await this.client.leaseGrant(this.ttl);
    const prev = plan.existing ? kvs.get(leaseKey(plan.existing)) : undefined;
    // New key: only if nobody created it meanwhile. Own key: only if unchanged since we read it.
    const res = await this.client.putIf(key, prev ? 'mod' : 'create', prev ? prev.modRev : '0', formatLeaseAttrs(lease), id).catch(async (err: unknown) => {
      await this.client.leaseRevoke(id);
      throw err;
    });
    if (!res.succeeded) {
      await this.client.leaseRevoke(id);
      return null;
    }
    if (prev && prev.etcdLease !== '0' && prev.etcdLease !== id) await this.client.leaseRevoke(prev.etcdLease);
    this.etcdLeaseId = id;
    lease.expiration = Date.now() + ttl * 1000;
    return { lease, revision: res.revision };
  }

  /** Keep-alive of the etcd lease; if etcd forgot it or the key is gone, writes the key again under a new etcd lease. */
  async renew(lease: Lease): Promise<Lease> {
    const id = this.etcdLeaseId;
    const ttl = id === undefined ? 0 : await this.client.leaseKeepAlive(id);
    const { kv } = await this.client.get(this.key(lease));
    const holder = kv && kvToLease(kv.key, kv.value, this.subnets);
    if (ttl > 0 && holder && holder.publicIp === lease.publicIp && kv.lease === id) return { ...lease, expiration: Date.now() + ttl * 1000 };
    if (holder && holder.publicIp !== lease.publicIp) throw new Error(`lease ${leaseName(lease)} now belongs to ${holder.publicIp}`);
    const got = await this.tryAcquire({ ...lease, preferredSubnet: lease.subnet, ...(lease.ipv6Subnet !== undefined ? { preferredIpv6Subnet: lease.ipv6Subnet } : {}) });
    if (!got || leaseKey(got.lease) !== leaseKey(lease)) throw new Error(`lease ${leaseName(lease)} could not be re-created`);
    return got.lease;
  }

  /** Deletes the key if it still holds lease.publicIp, and revokes the etcd lease. */
  async release(lease: Lease): Promise<void> {
    this.keeper.drop(lease);
    const key = this.key(lease);
    const { kv: cur } = await this.client.get(key);
    const holder = cur && kvToLease(cur.key, cur.value, this.subnets);
    if (cur && holder && holder.publicIp === lease.publicIp) await this.client.deleteIf(key, cur.modRevision);
    if (this.etcdLeaseId !== undefined) await this.client.leaseRevoke(this.etcdLeaseId);
    this.etcdLeaseId = undefined;
  }

  /** Lists the subnets prefix, updates the table (emitting diffs) and returns it. */
  async list(): Promise<{ leases: Lease[]; revision: number }> {
    await this.resync();
    return this.table.snapshot();
  }

  /** Diffs after fromRevision (from list()); starts the internal etcd watch on first use. */
  watch(fromRevision: number, onEvent: (ev: LeaseEvent) => void, onError?: (err: Error) => void): Watch {
    const w = this.table.watch(fromRevision, onEvent);
    if (onError) this.errorSinks.add(onError);
    this.start();
    return { stop: () => { w.stop(); if (onError) this.errorSinks.delete(onError); } };
  }

  private readonly errorSinks = new Set<(err: Error) => void>();

  /** See LeaseStore.onLost. */
  onLost(cb: (ev: LeaseLostEvent) => void): () => void {
    return this.keeper.onLost(cb);
  }

  /** Stops the watch, timers and the client; the key and its etcd lease stay (a restart takes them back). */
  async close(): Promise<void> {
    this.closed = true;
    this.keeper.stop();
    clearInterval(this.timer);
    this.watcher?.cancel();
    this.watcher = undefined;
    this.table.clearWatchers();
    this.client.close();
  }

  private key(l: { subnet: string; ipv6Subnet?: string | undefined }): string {
    return this.subnets + formatSubnetKey(l.subnet, l.ipv6Subnet);
  }

  private report(err: Error): void {
    this.onError(err);
    for (const s of this.errorSinks) s(err);
  }

  private async fetch(): Promise<{ kvs: Map<string, { lease: Lease; modRev: string; etcdLease: string }>; revision: number }> {
    const res = await this.client.list(this.subnets);
    const kvs = new Map<string, { lease: Lease; modRev: string; etcdLease: string }>();
    for (const kv of res.kvs) {
      const lease = kvToLease(kv.key, kv.value, this.subnets);
      if (lease) kvs.set(leaseKey(lease), { lease, modRev: kv.modRevision, etcdLease: kv.lease });
    }
    return { kvs, revision: res.revision };
  }

  private start(): void {
    if (this.closed || this.timer) return;
    this.timer = setInterval(() => void this.resync().catch((e: unknown) => this.report(e as Error)), this.resyncMs).unref();
    // List, then watch from the list's revision + 1: when a list was already handed out, the
    // watch resumes right after it (a compacted revision there is handled by the error path).
    if (this.snapRev > 0) this.startWatcher(this.snapRev + 1);
    else void this.resync().catch((e: unknown) => this.report(e as Error));
  }

  /** Re-lists, applies the difference, restarts the watch when needed (first time, broken, data loss). */
  private resync(): Promise<void> {
    this.resyncing ??= (async () => {
      try {
        // etcd's revision only grows, so a list older than what was seen before it was asked for
        // means etcd lost its data. One older than a watch event that arrived while it was in
        // flight is merely stale: applying it would drop that event's lease, so list again.
        const before = this.seenRev;
        let { kvs, revision } = await this.fetch();
        for (let tries = 0; tries < STALE_LIST_RETRIES && revision >= before && revision < this.seenRev && !this.closed; tries++) {
          ({ kvs, revision } = await this.fetch());
        }
        if (this.closed) return;
        const wiped = revision < before;
        this.table.applySnapshot([...kvs.values()].map((e) => e.lease), revision);
        this.snapRev = revision;
        this.seenRev = wiped ? revision : Math.max(this.seenRev, revision);
        this.keeper.check((s) => this.table.get(s), wiped ? undefined : revision);
        if (this.timer && (!this.watcher || wiped)) this.startWatcher(revision + 1);
      } finally {
        this.resyncing = undefined;
      }
    })();
    return this.resyncing;
  }

  private startWatcher(fromRev: number): void {
    this.watcher?.cancel();
    const w: EtcdWatch = this.client.watch(this.subnets, fromRev, {
      onEvent: (type, kv) => this.onKv(type === 'put' ? 'added' : 'removed', kv),
      // After a reconnect, a re-list catches what a resumed watch cannot (e.g. a wiped etcd).
      onReconnected: () => void this.resync().catch((e: unknown) => this.report(e as Error)),
      onCanceled: (err) => {
        // Typically the start revision was compacted (etcd cancels the watch, 3.4 without a
        // reason with gRPC): re-list, diff, and watch again from the new revision.
        this.report(new Error(`etcd watch canceled (revision compacted?) or failed, re-listing: ${err.message}`, { cause: err }));
        if (this.watcher !== w) return;
        this.watcher = undefined;
        void this.resync().catch((e: unknown) => this.report(e as Error));
      },
      onError: (err) => this.report(err),
    });
    this.watcher = w;
  }

  private onKv(type: 'added' | 'removed', kv: EtcdKeyValue): void {
    const rev = Number(kv.modRevision);
    if (this.closed || rev <= this.snapRev) return; // already part of the last list
    this.seenRev = Math.max(this.seenRev, rev);
    const key = kv.key;
    if (type === 'added') {
      const lease = kvToLease(key, kv.value, this.subnets);
      if (lease) this.table.apply({ type, lease }, rev);
      return;
    }
    const k = key.startsWith(this.subnets) ? parseLeaseKey(key.slice(this.subnets.length)) : null;
    if (k === null) return;
    // The subnet may already live on under another key (its IPv6 part changed): that one stays.
    if (this.table.get(leaseKey(k))?.ipv6Subnet !== k.ipv6Subnet) return;
    this.table.apply({ type, lease: { subnet: k.subnet, ...(k.ipv6Subnet !== undefined ? { ipv6Subnet: k.ipv6Subnet } : {}), publicIp: '', backendType: '', backendData: {}, expiration: 0 } }, rev);
    this.keeper.check((s) => this.table.get(s), rev);
  }
}

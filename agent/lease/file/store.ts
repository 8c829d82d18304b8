// `--store file:DIR`: the embedded lease store for a cluster on one machine, every node sharing
// DIR. Allocation, renewal and release run under flock(DIR/.lock); readers never lock (files are
// replaced atomically). Changes are seen through fs.watch plus a periodic re-scan (fs.watch can
// drop events, e.g. on overflow; dir-scanner.ts); expired leases count as gone and may be reclaimed.
import { mkdirSync, watch as fsWatch, type FSWatcher } from 'node:fs';
import type { NetConf } from '../../config/net-conf.ts';
import { checkAcquireFamilies, leaseFromPlan, planAcquire } from '../allocate.ts';
import { withDirLock } from './dir-lock.ts';
import { LeaseDirReader, createLeaseFile, removeLeaseFile, replaceLeaseFile } from './lease-io.ts';
import { LeaseTable } from '../lease-table.ts';
import { DirScanner } from './dir-scanner.ts';
import { OwnLeaseKeeper } from '../own-lease.ts';
import { type AcquireOptions, type Lease, type LeaseEvent, type LeaseLostEvent, type LeaseStore, type Watch, OutOfSubnetsError, leaseKey, leaseName } from '../store.ts';

/**
 * fs.watch names kept for reading one by one; past this (or an event without a name) the next read
 * is a full scan. Reading a batch of renamed-in files by name costs a stat and a read each, a full
 * scan a stat of every file on top: a 2,450-lease batch into a 5,000-file directory is read by name.
 */
const PENDING_LIMIT = 10_000;

/** Options of the file store; ttlMs defaults to 24 h like flannel, rescanMs (the shortest safety-net period) to 1 s. */
export interface FileStoreOptions {
  dir: string;
  netConf: NetConf;
  ttlMs?: number;
  /** See OwnLeaseKeeper. */
  renewMarginMs?: number;
  rescanMs?: number;
  /** Called for problems the store works around (unreadable lease file, failed renewal, ...). */
  onError?: (err: Error) => void;
}

/** Lease store over a shared directory (see the module comment); safe across processes and namespaces. */
export class FileLeaseStore implements LeaseStore {
  readonly netConf: NetConf;
  private readonly dir: string;
  private readonly ttlMs: number;
  private readonly onError: (err: Error) => void;
  private readonly reader: LeaseDirReader;
  private readonly table = new LeaseTable();
  private readonly keeper: OwnLeaseKeeper;
  private watcher: FSWatcher | undefined;
  private readonly scanner: DirScanner;
  private debounce: NodeJS.Timeout | undefined;
  /** File names fs.watch reported since the last read; `pendingAll` when one came without a name. */
  private readonly pending = new Set<string>();
  private pendingAll = false;
  private closed = false;

  constructor(opts: FileStoreOptions) {
    this.dir = opts.dir;
    this.netConf = opts.netConf;
    this.ttlMs = opts.ttlMs ?? 24 * 3600_000;
    this.onError = opts.onError ?? (() => undefined);
    mkdirSync(this.dir, { recursive: true });
    this.reader = new LeaseDirReader(this.dir, (name, err) => this.onError(new Error(`lease file ${name} ignored: ${String(err)}`, { cause: err })));
    this.scanner = new DirScanner(this.reader, {
      rescanMs: opts.rescanMs ?? 1000,
      onScan: (live) => { this.table.applySnapshot(live); this.keeper.check((subnet) => this.table.get(subnet)); },
      onError: this.onError,
    });
    this.keeper = new OwnLeaseKeeper({ ttlMs: this.ttlMs, ...(opts.renewMarginMs !== undefined ? { renewMarginMs: opts.renewMarginMs } : {}), renew: (l) => this.renew(l), reacquire: async (o) => ({ lease: await this.acquireLocked(o), revision: 0 }), onError: this.onError });
  }

  /** Takes this node's lease under the directory lock and keeps it renewed. */
  async acquire(opts: AcquireOptions): Promise<Lease> {
    this.start();
    const lease = await this.acquireLocked(opts);
    this.keeper.hold(lease, opts);
    this.rescan();
    return lease;
  }

  private acquireLocked(opts: AcquireOptions): Promise<Lease> {
    checkAcquireFamilies(this.netConf, opts);
    return withDirLock(this.dir, () => {
      const now = Date.now();
      const plan = planAcquire(this.netConf, this.reader.readAll().values(), opts, (l) => l.expiration > now);
      if (plan === null) throw new OutOfSubnetsError(this.netConf);
      for (const s of plan.stale) removeLeaseFile(this.dir, s.subnet, s.ipv6Subnet);
      const lease = leaseFromPlan(plan, opts, now + this.ttlMs);
      // Under the lock nobody else writes, so replacing an expired or own file is safe; a fresh
      // subnet is still created exclusively, so even a writer that skipped the lock cannot be overwritten.
      if (plan.existing) replaceLeaseFile(this.dir, lease);
      else createLeaseFile(this.dir, lease);
      return lease;
    });
  }

  /** Pushes the expiration out by the TTL; re-creates the file if it vanished; throws if another live node holds the subnet. */
  renew(lease: Lease): Promise<Lease> {
    return withDirLock(this.dir, () => {
      const now = Date.now();
      const cur = this.reader.readAll().get(leaseKey(lease));
      if (cur && cur.publicIp !== lease.publicIp && cur.expiration > now) {
        throw new Error(`lease ${leaseName(lease)} now belongs to ${cur.publicIp}`);
      }
      const next = { ...lease, backendData: { ...lease.backendData }, expiration: now + this.ttlMs };
      // A file of this subnet under another key (other IPv6 part) is dead or ours: it goes.
      if (cur && cur.ipv6Subnet !== lease.ipv6Subnet) removeLeaseFile(this.dir, cur.subnet, cur.ipv6Subnet);
      if (cur && cur.ipv6Subnet === lease.ipv6Subnet) replaceLeaseFile(this.dir, next);
      else createLeaseFile(this.dir, next);
      return next;
    });
  }

  /** Deletes the lease file if it still belongs to lease.publicIp, and stops renewing it. */
  async release(lease: Lease): Promise<void> {
    this.keeper.drop(lease);
    await withDirLock(this.dir, () => {
      const cur = this.reader.readAll().get(leaseKey(lease));
      if (cur && cur.publicIp === lease.publicIp) removeLeaseFile(this.dir, cur.subnet, cur.ipv6Subnet);
    });
    this.rescan();
  }

  /** Live leases, freshly scanned. */
  list(): Promise<{ leases: Lease[]; revision: number }> {
    this.start();
    this.rescan();
    return Promise.resolve(this.table.snapshot());
  }

  /** Diffs after fromRevision, from the shared table fed by fs.watch and the periodic scan. */
  watch(fromRevision: number, onEvent: (ev: LeaseEvent) => void): Watch {
    this.start();
    return this.table.watch(fromRevision, onEvent);
  }

  /** See LeaseStore.onLost. */
  onLost(cb: (ev: LeaseLostEvent) => void): () => void {
    return this.keeper.onLost(cb);
  }

  /** Stops watching and renewing; the lease file stays. */
  close(): Promise<void> {
    this.closed = true;
    this.keeper.stop();
    this.watcher?.close();
    this.scanner.stop();
    clearTimeout(this.debounce);
    this.table.clearWatchers();
    return Promise.resolve();
  }

  private start(): void {
    if (this.closed || !this.scanner.start()) return;
    try {
      this.watcher = fsWatch(this.dir, { persistent: false }, (_type, name) => {
        if (typeof name === 'string' && name !== '') this.scanner.noteWatched(name);
        if (typeof name === 'string' && name !== '' && this.pending.size < PENDING_LIMIT) this.pending.add(name);
        else this.pendingAll = true;
        // Coalesce the burst of events one rename produces into one read.
        this.debounce ??= setTimeout(() => { this.debounce = undefined; this.readPending(); }, 10).unref();
      });
      this.watcher.on('error', (err) => this.onError(err));
    } catch (err) {
      this.onError(err as Error); // the periodic scan still works
    }
    this.rescan();
  }

  /** The files fs.watch named, read alone; a vanished, unreadable or expired one (or an unnamed event) takes a full scan. */
  private readPending(): void {
    if (this.closed) return;
    const names = [...this.pending];
    this.pending.clear();
    if (this.pendingAll) {
      this.pendingAll = false;
      this.rescan();
      return;
    }
    let read: Map<string, Lease | null>;
    try {
      read = this.reader.readNames(names);
    } catch (err) {
      this.onError(err as Error);
      return;
    }
    const now = Date.now();
    if ([...read.values()].some((l) => l === null || l.expiration <= now)) {
      this.rescan();
      return;
    }
    for (const lease of read.values()) if (lease !== null) this.table.apply({ type: 'added', lease });
    this.keeper.check((subnet) => this.table.get(subnet));
  }

  private rescan(): void {
    if (!this.closed) this.scanner.scanNow();
  }
}

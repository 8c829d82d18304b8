// Keeps this node's own lease alive for a store: renews it before it expires and, when the store
// reports it gone (deleted by hand, taken after expiry, etcd data lost), registers again and tells
// the agent through onLost. Shared by the file and etcd stores; the store supplies renew/reacquire.
import { type AcquireOptions, type Lease, type LeaseLostEvent, leaseKey } from './store.ts';

/** What the keeper needs from its store. */
export interface OwnLeaseKeeperOptions {
  ttlMs: number;
  renew: (lease: Lease) => Promise<Lease>;
  /** Registers again; `revision` is the store revision of the write (0 where revisions do not apply). */
  reacquire: (opts: AcquireOptions) => Promise<{ lease: Lease; revision: number }>;
  onError: (err: Error) => void;
  /** How long before expiry to renew; default min(1 h, ttl/3) (flannel renews 1 h before). */
  renewMarginMs?: number;
}

/** Renewal timer plus lost-lease recovery for one store. */
export class OwnLeaseKeeper {
  private own: Lease | undefined;
  private opts: AcquireOptions | undefined;
  private heldAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private stopped = false;
  private readonly lostCbs = new Set<(ev: LeaseLostEvent) => void>();
  private readonly margin: number;

  constructor(private readonly o: OwnLeaseKeeperOptions) {
    // A margin as long as the TTL (flanneld's 60 min with a short test TTL) would renew in a loop.
    this.margin = Math.min(o.renewMarginMs ?? 3600_000, o.ttlMs / 3);
  }

  /** The lease being kept, if any. */
  current(): Lease | undefined {
    return this.own;
  }

  /** Starts keeping `lease` (acquired with `opts`); `revision` is the store revision it was written at. */
  hold(lease: Lease, opts: AcquireOptions, revision = 0): void {
    this.own = lease;
    this.opts = { ...opts, preferredSubnet: lease.subnet, ...(lease.ipv6Subnet !== undefined ? { preferredIpv6Subnet: lease.ipv6Subnet } : {}) };
    this.heldAt = revision;
    this.schedule(lease.expiration > 0 ? lease.expiration - this.margin - Date.now() : this.o.ttlMs - this.margin);
  }

  /** Stops keeping `lease` (release). */
  drop(lease: Lease): void {
    if (this.own === undefined || leaseKey(this.own) !== leaseKey(lease)) return;
    this.own = undefined;
    clearTimeout(this.timer);
  }

  /** Stops everything (close). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Registers a lost-lease callback; returns an unsubscribe function. */
  onLost(cb: (ev: LeaseLostEvent) => void): () => void {
    this.lostCbs.add(cb);
    return () => void this.lostCbs.delete(cb);
  }

  /** Called by the store after it refreshed its view (at `revision`): is our lease still there? */
  check(lookup: (subnet: string) => Lease | undefined, revision?: number): void {
    const own = this.own;
    if (!own || this.busy || this.stopped) return;
    if (revision !== undefined && revision < this.heldAt) return; // view older than our own write
    const cur = lookup(leaseKey(own));
    if (cur && cur.publicIp === own.publicIp && cur.ipv6Subnet === own.ipv6Subnet && cur.publicIpv6 === own.publicIpv6) return;
    void this.recover(own);
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    // setTimeout caps at 2^31-1 ms (~24.8 days); longer delays fire at once, so clamp.
    const ms = Math.max(0, Math.min(delayMs, 2 ** 31 - 1));
    this.timer = setTimeout(() => void this.renewNow(), ms).unref();
  }

  private async renewNow(): Promise<void> {
    const own = this.own;
    if (!own || this.busy || this.stopped) return;
    this.busy = true;
    try {
      const next = await this.o.renew(own);
      if (this.own === own) this.hold(next, this.opts as AcquireOptions, this.heldAt);
    } catch (err) {
      this.o.onError(new Error(`renewing lease ${own.subnet} failed: ${String(err)}`, { cause: err }));
      this.schedule(Math.min(this.margin / 4, 30_000));
    } finally {
      this.busy = false;
    }
  }

  private async recover(lost: Lease): Promise<void> {
    this.busy = true;
    clearTimeout(this.timer);
    let delay = 500;
    try {
      while (!this.stopped && this.own === lost) {
        try {
          const { lease: current, revision } = await this.o.reacquire(this.opts as AcquireOptions);
          if (this.stopped || this.own !== lost) return;
          this.hold(current, this.opts as AcquireOptions, revision);
          for (const cb of [...this.lostCbs]) {
            try { cb({ lost, current }); } catch (err) { this.o.onError(err as Error); }
          }
          return;
        } catch (err) {
          this.o.onError(new Error(`re-registering lost lease ${lost.subnet} failed: ${String(err)}`, { cause: err }));
          await new Promise((r) => setTimeout(r, delay).unref());
          delay = Math.min(delay * 2, 30_000);
        }
      }
    } finally {
      this.busy = false;
    }
  }
}

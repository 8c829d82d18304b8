// The in-memory lease table both stores keep: current leases, a monotonic revision, the last change
// of each subnet (for replays), and fan-out to watchers. Stores feed it snapshots (after a scan or
// re-list) or single events (from an etcd watch); it turns them into de-duplicated added/removed diffs.
// Replays keep one entry per subnet, not one per event: memory follows the number of subnets, never
// the number of events (a node whose peers churn for months must not grow).
import { type Lease, type LeaseEvent, type Watch, leaseKey, sameLeaseData } from './store.ts';

interface Entry {
  rev: number;
  ev: LeaseEvent;
}

/** Subnets whose last change is kept for watch(fromRevision) replays; older revisions get a full snapshot instead. */
const CHANGES_LIMIT = 20_000;

/** Lease table with revisions and watchers (pure, no I/O). */
export class LeaseTable {
  private readonly leases = new Map<string, Lease>();
  /** lease key -> its last change; Map order is revision order (a changed subnet is moved to the end). */
  private readonly changes = new Map<string, Entry>();
  private readonly watchers = new Set<(ev: LeaseEvent) => void>();
  /** Revision of the oldest state `changes` can replay from. */
  private horizon = 0;
  revision = 0;

  /** Current leases and revision. */
  snapshot(): { leases: Lease[]; revision: number } {
    return { leases: [...this.leases.values()].map((l) => ({ ...l })), revision: this.revision };
  }

  /** The cached lease under a key (leaseKey: the IPv4 subnet, or the IPv6 one of an IPv6-only lease), if any. */
  get(key: string): Lease | undefined {
    return this.leases.get(key);
  }

  /** Replaces the whole table by `leases`, emitting the difference. `revision` (etcd) or +1 per event (file). */
  applySnapshot(leases: Iterable<Lease>, revision?: number): number {
    const next = new Map<string, Lease>();
    for (const l of leases) next.set(leaseKey(l), l);
    let changes = 0;
    for (const [subnet, old] of this.leases) {
      if (!next.has(subnet)) changes += this.apply({ type: 'removed', lease: old }, revision);
    }
    for (const l of next.values()) changes += this.apply({ type: 'added', lease: l }, revision);
    if (revision !== undefined) this.advance(revision);
    return changes;
  }

  /** Applies one event; returns 1 when it changed the table (and was sent to watchers), else 0. */
  apply(ev: LeaseEvent, revision?: number): number {
    const key = leaseKey(ev.lease);
    const cur = this.leases.get(key);
    if (ev.type === 'added') {
      if (cur && sameLeaseData(cur, ev.lease)) {
        cur.expiration = ev.lease.expiration; // a renewal: not worth an event
        return 0;
      }
      this.leases.set(key, { ...ev.lease });
    } else {
      if (!cur) return 0;
      this.leases.delete(key);
      ev = { type: 'removed', lease: { ...cur } };
    }
    // Events of one etcd revision share it; a revision going backwards (etcd's data wiped) or
    // none at all (file store) moves one step on, so revisions stay monotonic for replays.
    const rev = revision === undefined || revision < this.revision ? this.revision + 1 : revision;
    this.revision = rev;
    this.changes.delete(key);
    this.changes.set(key, { rev, ev });
    for (const [subnet, oldest] of this.changes) {
      if (this.changes.size <= CHANGES_LIMIT) break;
      this.changes.delete(subnet);
      this.horizon = oldest.rev;
    }
    for (const w of [...this.watchers]) w(ev);
    return 1;
  }

  /** Moves the revision forward without a change (an etcd list at a newer revision); never backwards. */
  advance(revision: number): void {
    if (revision > this.revision) this.revision = revision;
  }

  /**
   * Replays what changed after fromRevision (the last change of each subnet, in revision order),
   * then delivers new events. A revision older than what is kept (or from before this table
   * existed) gets the current leases as 'added' instead: the caller may then hold stale leases,
   * which is why the stores hand out revisions from this table.
   */
  watch(fromRevision: number, onEvent: (ev: LeaseEvent) => void): Watch {
    const deliver = (ev: LeaseEvent): void => {
      try {
        onEvent(ev);
      } catch {
        // A throwing watcher must not break the store or the other watchers.
      }
    };
    if (fromRevision < this.horizon) {
      for (const l of this.leases.values()) deliver({ type: 'added', lease: { ...l } });
    } else {
      for (const e of this.changes.values()) if (e.rev > fromRevision) deliver(e.ev);
    }
    this.watchers.add(deliver);
    return { stop: () => void this.watchers.delete(deliver) };
  }

  /** Marks the current state as the oldest one watch() can replay from (the first snapshot). */
  setHorizon(): void {
    this.horizon = this.revision;
  }

  /** Drops all watchers. */
  clearWatchers(): void {
    this.watchers.clear();
  }
}

// The in-memory lease table both stores keep: current leases, a monotonic revision, a history of
// events, and fan-out to watchers. Stores feed it snapshots (after a scan or re-list) or single
// events (from an etcd watch); it turns them into de-duplicated added/removed diffs.
import { type Lease, type LeaseEvent, type Watch, sameLeaseData } from './store.ts';

interface Entry {
  rev: number;
  ev: LeaseEvent;
}

/** Events kept for watch(fromRevision) replays; older revisions get a full snapshot instead. */
const HISTORY_LIMIT = 20_000;

/** Lease table with revisions and watchers (pure, no I/O). */
export class LeaseTable {
  private readonly leases = new Map<string, Lease>();
  private readonly history: Entry[] = [];
  private readonly watchers = new Set<(ev: LeaseEvent) => void>();
  /** Revision of the oldest state history can replay from. */
  private horizon = 0;
  revision = 0;

  /** Current leases and revision. */
  snapshot(): { leases: Lease[]; revision: number } {
    return { leases: [...this.leases.values()].map((l) => ({ ...l })), revision: this.revision };
  }

  /** The cached lease for a subnet, if any. */
  get(subnet: string): Lease | undefined {
    return this.leases.get(subnet);
  }

  /** Replaces the whole table by `leases`, emitting the difference. `revision` (etcd) or +1 per event (file). */
  applySnapshot(leases: Iterable<Lease>, revision?: number): number {
    const next = new Map<string, Lease>();
    for (const l of leases) next.set(l.subnet, l);
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
    const cur = this.leases.get(ev.lease.subnet);
    if (ev.type === 'added') {
      if (cur && sameLeaseData(cur, ev.lease)) {
        cur.expiration = ev.lease.expiration; // a renewal: not worth an event
        return 0;
      }
      this.leases.set(ev.lease.subnet, { ...ev.lease });
    } else {
      if (!cur) return 0;
      this.leases.delete(ev.lease.subnet);
      ev = { type: 'removed', lease: { ...cur } };
    }
    // Events of one etcd revision share it; a revision going backwards (etcd's data wiped) or
    // none at all (file store) moves one step on, so revisions stay monotonic for replays.
    const rev = revision === undefined || revision < this.revision ? this.revision + 1 : revision;
    this.revision = rev;
    this.history.push({ rev, ev });
    if (this.history.length > HISTORY_LIMIT) {
      const dropped = this.history.splice(0, this.history.length - HISTORY_LIMIT);
      this.horizon = dropped[dropped.length - 1]?.rev ?? this.horizon;
    }
    for (const w of [...this.watchers]) w(ev);
    return 1;
  }

  /** Moves the revision forward without a change (an etcd list at a newer revision); never backwards. */
  advance(revision: number): void {
    if (revision > this.revision) this.revision = revision;
  }

  /**
   * Replays events after fromRevision, then delivers new ones. A revision older than the history
   * (or from before this table existed) gets the current leases as 'added' instead: the caller
   * may then hold stale leases, which is why the stores hand out revisions from this table.
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
      for (const e of this.history) if (e.rev > fromRevision) deliver(e.ev);
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

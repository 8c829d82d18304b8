// Which leases changed since the last reconcile pass, so that a pass triggered only by peers joining
// programs just those peers (O(joined)) instead of re-reading and re-diffing every route, neighbour
// and FDB entry of the node (O(cluster)). Anything else (a lease replaced or removed, a netlink
// event, the periodic or first pass, a failure) still takes a full pass. Pure bookkeeping, no I/O.

/** How a subnet changed: 'new' (absent before) or 'other' (replaced, removed, or new then gone). */
export type ChangeKind = 'new' | 'other';

/**
 * What the next pass may do: program only `joined`, or a full pass; `first`: peers that only joined,
 * to be programmed at once before a full pass that another trigger (periodic, netlink) merged in
 * asks for, so that a join never waits for a full pass's slices.
 */
export type PassScope = { full: false; joined: string[] } | { full: true; first?: string[] };

/** Lease-table changes between passes. */
export class LeaseChanges {
  private readonly changed = new Map<string, ChangeKind>();
  private needFull = true;

  /** Records a change of `subnet`; once 'other', a subnet stays 'other' until the next pass. */
  note(subnet: string, kind: ChangeKind): void {
    if (this.changed.get(subnet) === 'other') return;
    this.changed.set(subnet, kind);
  }

  /** True when the next pass will be a full one whatever triggers it. */
  get fullRequired(): boolean {
    return this.needFull;
  }

  /** The next pass must be a full one (a failure, drift, a start). */
  requireFull(): void {
    this.needFull = true;
  }

  /**
   * The scope of the pass about to run for trigger reasons `why` (ReconcileLoop's comma-joined
   * list), and forgets the changes: incremental only when the trigger is lease events alone and
   * every change is a subnet new to the table; with another trigger merged in, those subnets first.
   */
  take(why: string): PassScope {
    const reasons = why.split(',');
    const onlyLeases = reasons.every((r) => r === 'lease');
    const allNew = [...this.changed.values()].every((k) => k === 'new');
    const joinsOnly = allNew && !this.needFull && this.changed.size > 0 && reasons.includes('lease');
    const scope: PassScope = onlyLeases && allNew && !this.needFull ? { full: false, joined: [...this.changed.keys()] }
      : joinsOnly ? { full: true, first: [...this.changed.keys()] } : { full: true };
    this.changed.clear();
    if (scope.full) this.needFull = false;
    return scope;
  }
}

// Applies a desired weft-policy table in the calling thread's netns (weftd's, the node's): one
// `nft -f -` transaction of only what differs from what the kernel holds. The kernel's content is
// listed once and after any failure or resync; after a success the applied content is what it holds.
import { NftError } from '../../lib/netfilter/errors.ts';
import { listTable } from '../../lib/netfilter/list.ts';
import { runNft } from '../../lib/netfilter/run.ts';
import { contentFromListing, diffTable, type TableContent, type TableDiffStats } from '../../lib/netfilter/table-diff.ts';
import type { NftRunOptions, NftTableRef, NftTableState } from '../../lib/netfilter/types.ts';

/** What one apply did. */
export interface PolicyApplyResult {
  script: string;
  stats: TableDiffStats;
  listed: boolean;
  durationMs: number;
}

/** Keeps one table converged to the content handed to apply(). */
export class TableApplier {
  private held: TableContent | null | undefined;

  constructor(private readonly table: NftTableRef, private readonly opts: NftRunOptions = {}) {}

  /** Forgets what the kernel holds: the next apply lists the table first (periodic resync). */
  invalidate(): void {
    this.held = undefined;
  }

  /** Lists the table (with elements). */
  list(): NftTableState | null {
    return listTable(this.table, this.opts);
  }

  /** Converges the table to `want`; on a failed transaction re-lists and tries once more. */
  apply(want: TableContent): PolicyApplyResult {
    const t0 = performance.now();
    const once = (): PolicyApplyResult => {
      const listed = this.held === undefined;
      if (listed) {
        const state = this.list();
        this.held = state === null ? null : contentFromListing(state);
      }
      const { script, stats } = diffTable(this.table, this.held ?? null, want);
      if (script !== '') {
        try {
          runNft(['-f', '-'], script, this.opts);
        } catch (e) {
          this.held = undefined;
          throw e;
        }
      }
      this.held = want;
      return { script, stats, listed, durationMs: performance.now() - t0 };
    };
    try {
      return once();
    } catch (e) {
      if (!(e instanceof NftError) || e.kind !== 'failed') throw e;
      return once();
    }
  }

  /** Removes the table (weftd stopping with --network-policy off is not this: policy stays enforced). */
  remove(): void {
    runNft(['-f', '-'], `add table ${this.table.family} ${this.table.name}\ndelete table ${this.table.family} ${this.table.name}\n`, this.opts);
    this.held = null;
  }
}

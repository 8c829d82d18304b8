// Applies a desired weft-policy table in the calling thread's netns (weftd's, the node's), touching
// only what differs from what the kernel holds. When only set elements differ (a pod's labels, a new
// or gone pod) or when things are only removed (a policy deleted: its chains, sets, counters and the
// rules jumping to them) the change is one nf_tables netlink batch from this process: no `nft`
// spawned, no table read into nft's cache. Anything else (a policy's new chain, a new set) is one
// `nft -f -` transaction. The kernel's content is listed once and after any failure, synchronously,
// and on resync in a child process (relist); after a success the applied content is what it holds.
import { NftError } from '../../lib/netfilter/errors.ts';
import { listTable } from '../../lib/netfilter/list.ts';
import { listTableAsync } from './list-async.ts';
import { netlinkUsable } from '../../lib/netfilter/netlink-else-nft.ts';
import { keptNfnlSocket, type NfnlSocket } from '../../lib/netfilter/nfnl/socket.ts';
import { runNft } from '../../lib/netfilter/run.ts';
import { contentFromListing, diffTable, type TableContent, type TableDiffStats } from '../../lib/netfilter/table-diff.ts';
import { commitElementDelta, elementOnlyDelta } from '../../lib/netfilter/table-elem-diff.ts';
import { commitShrink, shrinkOnlyDelta } from '../../lib/netfilter/table-shrink.ts';
import type { NftRunOptions, NftTableRef, NftTableState } from '../../lib/netfilter/types.ts';

/** What one apply did: nothing, an element batch over netlink, or an nft transaction (its script). */
export interface PolicyApplyResult {
  via: 'none' | 'netlink' | 'nft';
  script: string;
  stats: TableDiffStats;
  listed: boolean;
  /** Of durationMs, the time spent listing the kernel's table (0 when it was not listed). */
  listMs: number;
  durationMs: number;
}

const NO_STATS: TableDiffStats = { setsAdded: 0, setsDeleted: 0, elementsAdded: 0, elementsDeleted: 0, chainsRewritten: 0, chainsDeleted: 0 };

/** Keeps one table converged to the content handed to apply(). */
export class TableApplier {
  private held: TableContent | null | undefined;
  /** Bumped by every write to the kernel (tried or done): a listing taken across one may or may not show it. */
  private writes = 0;

  /** `socket` opens the netlink socket of the calling thread's netns (default: one kept for the process). */
  constructor(private readonly table: NftTableRef, private readonly opts: NftRunOptions = {}, private readonly socket: () => NfnlSocket = keptNfnlSocket) {}

  /** Forgets what the kernel holds: the next apply lists the table first. */
  invalidate(): void {
    this.held = undefined;
    this.writes++;
  }

  /**
   * Lists the table in a child process (the thread stays free for passes meanwhile) and takes the
   * listing as what the kernel holds, so the next apply repairs any drift. Resolves false, keeping
   * what was held, when an apply wrote to the kernel while nft listed: the listing may predate it.
   */
  async relist(): Promise<boolean> {
    const before = this.writes;
    const state = await listTableAsync(this.table, this.opts);
    if (this.writes !== before) return false;
    this.held = state === null ? null : contentFromListing(state);
    return true;
  }

  /** Lists the table (with elements). */
  list(): NftTableState | null {
    return listTable(this.table, this.opts);
  }

  /** Converges the table to `want`; on a failed transaction re-lists and tries once more, with nft. */
  apply(want: TableContent): PolicyApplyResult {
    const t0 = performance.now();
    let listMs = 0;
    const once = (mayNetlink: boolean): PolicyApplyResult => {
      const listed = this.held === undefined;
      if (listed) {
        const tl = performance.now();
        const state = this.list();
        this.held = state === null ? null : contentFromListing(state);
        listMs += performance.now() - tl;
      }
      const held = this.held ?? null;
      const delta = held !== null && mayNetlink && netlinkUsable(this.opts) ? elementOnlyDelta(held, want) : null;
      if (delta !== null) {
        if (delta.length === 0) return { via: 'none', script: '', stats: NO_STATS, listed, listMs, durationMs: performance.now() - t0 };
        try {
          commitElementDelta(this.socket(), this.table, delta);
        } catch (e) {
          // The kernel applied nothing of the refused batch: re-list and let nft do it.
          this.held = undefined;
          throw new NftError('failed', `nftables: element batch on ${this.table.family} ${this.table.name} refused: ${(e as Error).message}`, { cause: e });
        }
        this.held = want;
        const stats = { ...NO_STATS, elementsAdded: delta.reduce((n, d) => n + d.add.length, 0), elementsDeleted: delta.reduce((n, d) => n + d.del.length, 0) };
        return { via: 'netlink', script: '', stats, listed, listMs, durationMs: performance.now() - t0 };
      }
      const shrink = held !== null && mayNetlink && netlinkUsable(this.opts) ? shrinkOnlyDelta(held, want) : null;
      if (shrink !== null && held !== null) {
        try {
          commitShrink(this.socket(), this.table, shrink);
        } catch (e) {
          this.held = undefined;
          throw e instanceof NftError ? e : new NftError('failed', `nftables: removal batch on ${this.table.family} ${this.table.name} refused: ${(e as Error).message}`, { cause: e });
        }
        this.held = want;
        const stats = {
          ...NO_STATS, setsDeleted: shrink.sets.length, chainsDeleted: shrink.chains.length, chainsRewritten: shrink.rules.length,
          elementsAdded: shrink.elements.reduce((n, d) => n + d.add.length, 0), elementsDeleted: shrink.elements.reduce((n, d) => n + d.del.length, 0),
        };
        return { via: 'netlink', script: '', stats, listed, listMs, durationMs: performance.now() - t0 };
      }
      const { script, stats } = diffTable(this.table, held, want);
      if (script !== '') {
        try {
          runNft(['-f', '-'], script, this.opts);
        } catch (e) {
          this.held = undefined;
          throw e;
        }
      }
      this.held = want;
      return { via: script === '' ? 'none' : 'nft', script, stats, listed, listMs, durationMs: performance.now() - t0 };
    };
    try {
      const r = (() => {
        try {
          return once(true);
        } catch (e) {
          if (!(e instanceof NftError) || e.kind !== 'failed') throw e;
          return once(false);
        }
      })();
      if (r.via !== 'none') this.writes++;
      return r;
    } catch (e) {
      this.writes++;
      throw e;
    }
  }

  /** Removes the table (weftd stopping with --network-policy off is not this: policy stays enforced). */
  remove(): void {
    this.writes++;
    runNft(['-f', '-'], `add table ${this.table.family} ${this.table.name}\ndelete table ${this.table.family} ${this.table.name}\n`, this.opts);
    this.held = null;
  }
}

// The table weft owns and whole-table operations.
import { NftBatch } from './batch.ts';
import type { NftRunOptions, NftTableRef } from './types.ts';

/**
 * weft's table: `inet weft`. One inet table serves IPv4 and IPv6 (nat in inet chains needs Linux
 * >= 5.2), so a dual-stack ADD is one transaction on one table and DEL/GC list one table. Concerns
 * (bridge masquerade, portmap, weftd ip-masq) own their own chains and sets inside it, each with
 * its own name prefix, and never flush one another's.
 */
export const WEFT_TABLE: NftTableRef = { family: 'inet', name: 'weft' };

/** Per-family tables, for callers that must stay within `ip`/`ip6` (e.g. kernels without inet nat). */
export const WEFT_TABLE_V4: NftTableRef = { family: 'ip', name: 'weft' };
/** See WEFT_TABLE_V4. */
export const WEFT_TABLE_V6: NftTableRef = { family: 'ip6', name: 'weft' };

/**
 * weft's bridge-family table: `bridge weft`, for frames crossing a Linux bridge before they are
 * forwarded (the bridge plugin's macspoofchk). Same ownership rules as WEFT_TABLE.
 */
export const WEFT_BRIDGE_TABLE: NftTableRef = { family: 'bridge', name: 'weft' };

/** Deletes a table with everything in it; succeeds when it is absent. Runs in the caller's netns unless netnsPath. */
export function deleteTable(table: NftTableRef = WEFT_TABLE, opts: NftRunOptions = {}): void {
  new NftBatch(table).deleteTable().apply(opts);
}

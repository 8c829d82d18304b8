// Applies a plan in the caller's netns (or opts.netnsPath): an update as ONE `nft -f -` transaction
// (the kernel takes all of it or none, so a failure leaves the previous state in place). A full sync
// goes batch by batch instead (full-sync.ts).
import { runNft } from '../../lib/netfilter/run.ts';
import type { NftRunOptions } from '../../lib/netfilter/types.ts';
import { diffContent, type SvcPlan } from './diff.ts';
import type { KernelContent, SvcContent } from './content.ts';
import { skeletonScript } from './skeleton.ts';
import type { ProxyNodeConfig } from './types.ts';
import { emptyContent } from './content.ts';
import { FIXED_CHAINS } from './skeleton.ts';

/** The script of one sync: the skeleton first when `withSkeleton` (start-up), then the plan's commands. */
export function syncScript(plan: SvcPlan, node: ProxyNodeConfig, withSkeleton: boolean): string {
  const lines = [...(withSkeleton ? skeletonScript(node) : []), ...plan.commands];
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/** What the kernel holds when the table is absent: nothing (the skeleton will create the fixed parts). */
export function nothingHeld(): KernelContent {
  const e = emptyContent();
  return { chains: new Map(), elements: e.elements, affinity: new Map(), epMaps: new Map(), allChains: new Set(FIXED_CHAINS) };
}

/** Diffs `want` against `have` and applies the difference (plus the skeleton when asked) in one transaction; returns the plan. */
export function applyContent(want: SvcContent, have: KernelContent, node: ProxyNodeConfig, withSkeleton: boolean, opts: NftRunOptions = {}): SvcPlan {
  const plan = diffContent(want, have);
  const script = syncScript(plan, node, withSkeleton);
  if (script !== '') runNft(['-f', '-'], script, opts);
  return plan;
}

/** Removes weft's Service table (all Services unprogrammed); succeeds when it is absent. Caller's netns unless opts.netnsPath. */
export function teardownServiceTable(opts: NftRunOptions = {}): void {
  runNft(['-f', '-'], 'add table inet weft-svc\ndelete table inet weft-svc\n', opts);
}

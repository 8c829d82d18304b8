// Named counter objects of one table (`nft -j list counters table ...`): O(counters), no set
// elements or rules read, so a metrics scrape stays cheap when sets are large.
import { NftError } from './errors.ts';
import { parseNftListing } from './parse-listing.ts';
import { runNft } from './run.ts';
import { validateFamily, validateName } from './validate.ts';
import type { NftRunOptions, NftTableRef } from './types.ts';

/** The table's named counters (in the caller's netns, or `netnsPath`); empty when the table is absent. */
export function listCounters(table: NftTableRef, opts: NftRunOptions = {}): Map<string, { readonly packets: number; readonly bytes: number }> {
  try {
    const out = runNft(['-j', 'list', 'counters', 'table', validateFamily(table.family), validateName('table', table.name)], undefined, opts).stdout;
    return parseNftListing(out).counters ?? new Map();
  } catch (err) {
    if (err instanceof NftError && err.isNotFound) return new Map();
    throw err;
  }
}

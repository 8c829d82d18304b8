// `nft -j list <what>` as raw JSON text, null when the object does not exist: for callers that parse
// a listing their own way (weftd's Service table keeps rule comments and map values list.ts drops).
import { NftError } from './errors.ts';
import { runNft } from './run.ts';
import type { NftRunOptions } from './types.ts';

/**
 * Runs `nft -j list ...what` (caller's netns, or opts.netnsPath); null when nft says it is not there.
 * `terse`: `nft -t`, sets and maps listed without their elements.
 */
export function listJsonOrNull(what: readonly string[], opts: NftRunOptions = {}, terse = false): string | null {
  try {
    return runNft(['-j', ...(terse ? ['-t'] : []), 'list', ...what], undefined, opts).stdout;
  } catch (err) {
    if (err instanceof NftError && err.isNotFound) return null;
    throw err;
  }
}

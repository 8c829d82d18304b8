// Reading weft's tables back: `nft -j list ...` parsed into typed state, for CHECK, DEL, idempotence and tests.
import { NftError } from './errors.ts';
import { parseNftListing } from './parse-listing.ts';
import { runNft } from './run.ts';
import { formatComment, validateFamily, validateName } from './validate.ts';
import type { NftElementState, NftRunOptions, NftSetState, NftTableRef, NftTableState } from './types.ts';

/** Listing options: `terse` omits set elements (`nft -t`), which keeps a listing O(1) in pods. */
export interface NftListOptions extends NftRunOptions {
  readonly terse?: boolean;
}

function listJson(what: readonly string[], opts: NftListOptions): string | null {
  try {
    return runNft([...(opts.terse === true ? ['-t'] : []), '-j', 'list', ...what], undefined, opts).stdout;
  } catch (err) {
    if (err instanceof NftError && err.isNotFound) return null;
    throw err;
  }
}

/** Lists a table (in the caller's netns, or `netnsPath`); `null` when the table does not exist. */
export function listTable(table: NftTableRef, opts: NftListOptions = {}): NftTableState | null {
  const json = listJson(['table', validateFamily(table.family), validateName('table', table.name)], opts);
  return json === null ? null : parseNftListing(json);
}

/** Lists one set or map with its elements; `null` when it (or its table) does not exist. */
export function listSet(table: NftTableRef, set: string, opts: NftRunOptions & { kind?: 'set' | 'map' } = {}): NftSetState | null {
  const what = [opts.kind ?? 'set', validateFamily(table.family), validateName('table', table.name), validateName('set', set)];
  const json = listJson(what, opts);
  return json === null ? null : (parseNftListing(json).sets.get(set) ?? null);
}

/**
 * Elements of a set or map whose comment equals `comment` (e.g. a container ID), so DEL can find a
 * pod's elements without prevResult. Empty when the set or table is absent. O(elements) on purpose:
 * only DEL/GC/CHECK paths call it.
 */
export function findElementsByComment(
  table: NftTableRef,
  set: string,
  comment: string,
  opts: NftRunOptions & { kind?: 'set' | 'map' } = {},
): NftElementState[] {
  formatComment('element comment', comment);
  return (listSet(table, set, opts)?.elements ?? []).filter((e) => e.comment === comment);
}

/** The rules of `chain` tagged `tag` (rule comment); empty when the chain or table is absent. */
export function findRulesByTag(state: NftTableState | null, chain: string, tag: string): { handle: number }[] {
  return (state?.chains.get(chain)?.rules ?? []).filter((r) => r.comment === tag);
}

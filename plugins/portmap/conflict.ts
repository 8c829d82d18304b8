// Explains a refused ADD: which planned DNAT keys are already bound to other data, and by whom.
import { listTable } from '../../lib/netfilter/list.ts';
import { WEFT_TABLE } from '../../lib/netfilter/table.ts';
import type { NftAtom, NftElementState, NftRunOptions, NftTableState } from '../../lib/netfilter/types.ts';
import type { PlannedElement } from './plan.ts';
import { isDnatMap } from './names.ts';

/** A planned DNAT element whose key is already in the map with other data. */
export interface Clash {
  planned: PlannedElement;
  existing: NftElementState;
}

/** True when two element atoms denote the same value (nft lists ports as numbers, addresses canonical). */
export function sameAtom(a: NftAtom | undefined, b: NftAtom | undefined): boolean {
  return a !== undefined && b !== undefined && String(a).toLowerCase() === String(b).toLowerCase();
}

/** True when two atom lists are equal element by element. */
export function sameAtoms(a: readonly NftAtom[] | undefined, b: readonly NftAtom[] | undefined): boolean {
  return a !== undefined && b !== undefined && a.length === b.length && a.every((x, i) => sameAtom(x, b[i]));
}

/** The element of `set` in `state` with key `key`, if listed. */
export function findElement(state: NftTableState | null, set: string, key: readonly NftAtom[]): NftElementState | undefined {
  return state?.sets.get(set)?.elements.find((e) => sameAtoms(e.key, key));
}

/** Planned DNAT elements that clash with the listed table (same key, other data). Pure. */
export function findClashes(state: NftTableState | null, planned: readonly PlannedElement[]): Clash[] {
  const out: Clash[] = [];
  for (const p of planned) {
    if (!isDnatMap(p.set)) continue;
    const existing = findElement(state, p.set, p.key);
    if (existing !== undefined && !sameAtoms(existing.data, p.data)) out.push({ planned: p, existing });
  }
  return out;
}

/** Lists the table (node netns, or netnsPath) and returns the clashes; used only after nft refused an ADD. */
export function diagnoseClashes(planned: readonly PlannedElement[], opts: NftRunOptions = {}): Clash[] {
  return findClashes(listTable(WEFT_TABLE, opts), planned);
}

/** One line per clash: `tcp hostPort 8080 (any address) is mapped to 10.1.0.5:80 by <owner>`. */
export function formatClashes(clashes: readonly Clash[]): string {
  return clashes
    .map(({ planned, existing }) => {
      const m = planned.mapping;
      const where = m?.hostIP ?? (m?.family === undefined ? 'any address' : `any IPv${m.family} address`);
      const target = (existing.data ?? []).map(String).join(':');
      return `${m?.protocol ?? '?'} hostPort ${m?.hostPort ?? '?'} (${where}) is already mapped to ${target} by ${existing.comment ?? 'an unknown owner'}`;
    })
    .join('; ');
}

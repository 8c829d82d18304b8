// Per-Service pieces of the desired content and their sum: an incremental sync diffs only the
// Services that changed; hairpin pairs are shared between Services, so they are counted. Pure.
import { emptyContent, type FixedMapName, type SvcContent } from './content.ts';
import type { ElemOp } from './diff.ts';
import type { ServicePortUnit } from './model.ts';

/** Adds `part` into `into` (chains, elements, affinity maps). */
export function mergeInto(into: SvcContent, part: SvcContent): void {
  for (const [n, c] of part.chains) into.chains.set(n, c);
  for (const [m, els] of part.elements) {
    const dst = into.elements.get(m);
    if (dst !== undefined) for (const [k, v] of els) dst.set(k, v);
  }
  for (const [n, a] of part.affinity) into.affinity.set(n, a);
  // The same objects: slots recorded on the sum land in the fragments too.
  for (const [n, m] of part.epMaps) into.epMaps.set(n, m);
}

/** Drops `c`'s empty element maps (a Service uses 2-4 of the 20; the rest cost ~4 KiB per Service kept). Returns `c`. */
export function compactContent(c: SvcContent): SvcContent {
  for (const [name, els] of c.elements) if (els.size === 0) c.elements.delete(name);
  return c;
}

/** The sum of every fragment. */
export function mergeAll(parts: Iterable<SvcContent>): SvcContent {
  const c = emptyContent();
  for (const p of parts) mergeInto(c, p);
  return c;
}

/** The hairpin maps' names. */
export const HAIRPIN_MAPS: readonly FixedMapName[] = ['hairpin4', 'hairpin6'];

/** A copy of `c` without hairpin elements (they are diffed through HairpinCounts). */
export function withoutHairpin(c: SvcContent): SvcContent {
  const elements = new Map(c.elements);
  for (const h of HAIRPIN_MAPS) elements.set(h, new Map());
  return { ...c, elements };
}

/** The hairpin pairs of one Service's units by map, as renderUnit adds them (every endpoint . itself); a stored fragment keeps none. */
export function unitHairpins(units: readonly ServicePortUnit[] | undefined): Pick<SvcContent, 'elements'> {
  const elements: SvcContent['elements'] = new Map();
  for (const u of units ?? []) {
    const h: FixedMapName = u.family === 4 ? 'hairpin4' : 'hairpin6';
    let m = elements.get(h);
    if (m === undefined) elements.set(h, (m = new Map()));
    for (const b of [...u.cluster, ...u.internal, ...u.external]) m.set(`${b.ip} . ${b.ip}`, '');
  }
  return { elements };
}

/** Drops `c`'s hairpin maps (counted apart, rebuilt from the units when needed). Returns `c`. */
export function dropHairpin(c: SvcContent): SvcContent {
  for (const h of HAIRPIN_MAPS) c.elements.delete(h);
  return c;
}

/** Reference counts of hairpin pairs over all Services; `update` returns the element changes. */
export class HairpinCounts {
  private readonly counts = new Map<FixedMapName, Map<string, number>>(HAIRPIN_MAPS.map((h) => [h, new Map()]));

  /** Counts every fragment from scratch (after a full sync). */
  reset(parts: Iterable<Pick<SvcContent, 'elements'>>): void {
    for (const m of this.counts.values()) m.clear();
    for (const p of parts) this.update(undefined, p);
  }

  /** Moves one Service from `before` to `after`; returns the element changes. */
  update(before: Pick<SvcContent, 'elements'> | undefined, after: Pick<SvcContent, 'elements'> | undefined): ElemOp[] {
    const out: ElemOp[] = [];
    for (const h of HAIRPIN_MAPS) {
      const counts = this.counts.get(h) ?? new Map<string, number>();
      const old = before?.elements.get(h) ?? new Map<string, string>();
      const neu = after?.elements.get(h) ?? new Map<string, string>();
      for (const k of neu.keys()) {
        if (old.has(k)) continue;
        const n = counts.get(k) ?? 0;
        counts.set(k, n + 1);
        if (n === 0) out.push({ verb: 'add', map: h, key: k, value: '' });
      }
      for (const k of old.keys()) {
        if (neu.has(k)) continue;
        const n = (counts.get(k) ?? 1) - 1;
        if (n <= 0) {
          counts.delete(k);
          out.push({ verb: 'delete', map: h, key: k, value: '' });
        } else counts.set(k, n);
      }
    }
    return out;
  }
}

// Per-Service pieces of the desired content and their sum: an incremental sync diffs only the
// Services that changed; hairpin pairs are shared between Services, so they are counted. Pure.
import { emptyContent, type FixedMapName, type SvcContent } from './content.ts';
import type { ElemOp } from './diff.ts';
import type { ServicePortUnit } from './model.ts';
import { addrKey } from './endpoint-refs.ts';
import { AddrTable } from './addr-table.ts';

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

/** One Service's hairpin endpoints by set: each address `a` stands for the element `a . a`. */
export type HairpinIps = Map<FixedMapName, Set<string>>;

/** The hairpin endpoints of one Service's units by set, as renderUnit adds their pairs (every endpoint . itself); a stored fragment keeps none. */
export function unitHairpins(units: readonly ServicePortUnit[] | undefined): HairpinIps {
  const out: HairpinIps = new Map();
  for (const u of units ?? []) {
    const h: FixedMapName = u.family === 4 ? 'hairpin4' : 'hairpin6';
    let m = out.get(h);
    if (m === undefined) out.set(h, (m = new Set()));
    for (const b of [...u.cluster, ...u.internal, ...u.external]) m.add(b.ip);
  }
  return out;
}

/** Reference counts of hairpin endpoints over all Services, keyed by addrKey (IPv4 as a number in typed arrays: no string or Map entry kept per address); `update` returns the element changes. */
export class HairpinCounts {
  private readonly counts = new Map<FixedMapName, AddrTable>(HAIRPIN_MAPS.map((h) => [h, new AddrTable()]));

  /** Counts every Service from scratch (after a full sync). */
  reset(parts: Iterable<HairpinIps>): void {
    for (const m of this.counts.values()) m.clear();
    for (const p of parts) this.update(undefined, p);
  }

  /** Moves one Service from `before` to `after`; returns the element changes. */
  update(before: HairpinIps | undefined, after: HairpinIps | undefined): ElemOp[] {
    const out: ElemOp[] = [];
    const none = new Set<string>();
    for (const h of HAIRPIN_MAPS) {
      const counts = this.counts.get(h) ?? new AddrTable();
      const old = before?.get(h) ?? none;
      const neu = after?.get(h) ?? none;
      for (const ip of neu) {
        if (old.has(ip)) continue;
        const a = addrKey(ip);
        const n = counts.get(a) ?? 0;
        counts.set(a, n + 1);
        if (n === 0) out.push({ verb: 'add', map: h, key: `${ip} . ${ip}`, value: '' });
      }
      for (const ip of old) {
        if (neu.has(ip)) continue;
        const a = addrKey(ip);
        const n = (counts.get(a) ?? 1) - 1;
        if (n <= 0) {
          counts.delete(a);
          out.push({ verb: 'delete', map: h, key: `${ip} . ${ip}`, value: '' });
        } else counts.set(a, n);
      }
    }
    return out;
  }
}

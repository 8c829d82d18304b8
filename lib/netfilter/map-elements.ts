// Map elements in the whole-table model (table-diff.ts): a map's element is one string, its key and
// its data as nft writes them (`10.0.0.5 : jump g-1`), so that a TableSet of a map diffs like a set's
// and a changed datum reads as the old element gone and a new one added. Pure.
import { formatKey } from './validate.ts';
import type { NftKey, NftMapSpec, NftSetSpec } from './types.ts';

const SEP = ' : ';

/** True for the spec of a map (it has data types). */
export function isMapSpec(spec: NftSetSpec | NftMapSpec): spec is NftMapSpec {
  return 'data' in spec;
}

/** A map element as TableSet keeps it: the formatted key, then the formatted data (a verdict such as `jump <chain>`). */
export function mapElementKey(key: NftKey, data: NftKey): string {
  return `${formatKey('map key', key)}${SEP}${formatKey('map data', data)}`;
}

/** A map element's key and data texts (the whole text as key when it holds no data). */
export function splitMapElement(e: string): { key: string; data: string | undefined } {
  const i = e.indexOf(SEP);
  return i < 0 ? { key: e, data: undefined } : { key: e.slice(0, i), data: e.slice(i + SEP.length) };
}

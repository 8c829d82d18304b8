// Reading weft's Service table back: `nft -j list table inet weft-svc` -> KernelContent (chains with
// their first rule's comment, fixed maps' elements, endpoint slots, pinned affinity clients). Parsing is pure.
import { AFFINITY_MAP, DYNAMIC_MAPS, DYNAMIC_SETS, SVC_TABLE, emptyContent, type FixedMapName, type KernelContent } from './content.ts';
import { listJsonOrNull } from '../../lib/netfilter/list-json.ts';
import { isSharedMap } from './slots.ts';
import { eachItem, eachMember, skipSpace } from './json-scan.ts';
import type { NftRunOptions } from '../../lib/netfilter/types.ts';

type J = Record<string, unknown>;

/** One JSON element key or value in nft's text form (concatenations joined by ' . ', verdicts as `goto x`). */
export function formatJsonValue(v: unknown): string {
  if (typeof v === 'string' || typeof v === 'number') return String(v);
  if (Array.isArray(v)) return v.map(formatJsonValue).join(', ');
  if (v !== null && typeof v === 'object') {
    const o = v as J;
    if ('concat' in o) return (o.concat as unknown[]).map(formatJsonValue).join(' . ');
    if ('elem' in o) return formatJsonValue((o.elem as J).val);
    if ('prefix' in o) return `${formatJsonValue((o.prefix as J).addr)}/${String((o.prefix as J).len)}`;
    for (const verdict of ['goto', 'jump'] as const) if (verdict in o) return `${verdict} ${String((o[verdict] as J).target)}`;
    for (const verdict of ['drop', 'accept', 'return', 'continue'] as const) if (verdict in o) return verdict;
  }
  return JSON.stringify(v);
}

/**
 * One element of a shared endpoint map, `<address> . <port> . <slot>` (or `<nodePort> . <slot>`) ->
 * endpoint, noted in the slots of its key (`<map>/<address> . <port>`).
 */
export function noteSlotElement(epMaps: KernelContent['epMaps'], map: string, key: string, endpoint: string): void {
  const cut = key.lastIndexOf(' . ');
  const slots = `${map}/${key.slice(0, cut)}`;
  let m = epMaps.get(slots);
  if (m === undefined) epMaps.set(slots, (m = new Map()));
  m.set(Number(key.slice(cut + 3)), endpoint);
}

/** One set or map of a listing into `out`: its elements, read one at a time (json-scan.ts). */
function scanSet(t: string, at: number, out: KernelContent, fixed: Set<string>): void {
  let name = '';
  let elems = -1;
  eachMember(t, at, (k, s, e) => {
    if (k === 'name') name = String(JSON.parse(t.slice(s, e)));
    else if (k === 'elem') elems = s;
  });
  if (elems < 0) {
    if (fixed.has(name)) out.elements.set(name as FixedMapName, new Map());
    return;
  }
  const kept = fixed.has(name) ? new Map<string, string>() : undefined;
  if (kept !== undefined) out.elements.set(name as FixedMapName, kept);
  const shared = isSharedMap(name);
  if (kept === undefined && name !== AFFINITY_MAP && !shared) return;
  eachItem(t, elems, (s, e) => {
    const el = JSON.parse(t.slice(s, e)) as unknown;
    const k = formatJsonValue(Array.isArray(el) ? el[0] : el);
    const v = Array.isArray(el) ? formatJsonValue(el[1]) : '';
    if (kept !== undefined) kept.set(k, v);
    else if (shared) noteSlotElement(out.epMaps, name, k, v);
    else {
      // client . address . proto . port -> endpoint, grouped by the affinity key after the client.
      const key = k.slice(k.indexOf(' . ') + 3);
      let g = out.affinity.get(key);
      if (g === undefined) out.affinity.set(key, (g = { clients: new Map() }));
      g.clients.set(k, v);
    }
  });
}

/**
 * Parses a JSON listing of the Service table. The text is walked, not parsed whole: at 10,000
 * Services its tree (~210,000 elements) took a resync's peak RSS from ~150 to ~240 MiB.
 */
export function parseSvcListing(json: string): KernelContent {
  const fixed = new Set<string>([...Object.keys(DYNAMIC_MAPS), ...Object.keys(DYNAMIC_SETS)]);
  const base = emptyContent();
  const out: KernelContent = { chains: new Map(), elements: base.elements, affinity: new Map(), epMaps: new Map(), allChains: new Set() };
  eachMember(json, skipSpace(json, 0), (top, at) => {
    if (top !== 'nftables') return;
    eachItem(json, at, (is) => {
      eachMember(json, is, (kind, s, e) => {
        if (kind === 'map' || kind === 'set') return scanSet(json, s, out, fixed);
        if (kind === 'chain') out.allChains.add(String((JSON.parse(json.slice(s, e)) as J).name));
        else if (kind === 'rule') {
          const rule = JSON.parse(json.slice(s, e)) as J;
          const name = String(rule.chain);
          if (!out.chains.has(name)) out.chains.set(name, typeof rule.comment === 'string' ? rule.comment : '');
        }
      });
    });
  });
  for (const n of out.allChains) if (!out.chains.has(n)) out.chains.set(n, '');
  return out;
}

/** Lists the Service table in the caller's netns (or opts.netnsPath); null when it does not exist. */
export function readSvcTable(opts: NftRunOptions = {}): KernelContent | null {
  const json = listJsonOrNull(['table', SVC_TABLE.family, SVC_TABLE.name], opts);
  return json === null ? null : parseSvcListing(json);
}

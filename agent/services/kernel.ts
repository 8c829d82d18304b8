// Reading weft's Service table back -> KernelContent (chains with their first rule's comment, fixed
// maps' elements, endpoint slots, pinned affinity clients): the structure from `nft -j -t list table
// inet weft-svc` (no elements), the elements set by set over nf_tables netlink; the hairpin pairs and
// endpoint slots kept compact (listed.ts). Parsing is pure.
import { AFFINITY_MAP, DYNAMIC_MAPS, DYNAMIC_SETS, SVC_TABLE, emptyContent, type FixedMapName, type KernelContent } from './content.ts';
import { listJsonOrNull } from '../../lib/netfilter/list-json.ts';
import { isSharedMap } from './slots.ts';
import { eachItem, eachMember, skipSpace } from './json-scan.ts';
import type { NftDataType, NftRunOptions } from '../../lib/netfilter/types.ts';
import { eachSetElem } from '../../lib/netfilter/nfnl/set-elements.ts';
import { parseKeyBytes } from '../../lib/netfilter/nfnl/key-codec.ts';
import type { NfnlSocket } from '../../lib/netfilter/nfnl/socket.ts';
import { openNfnlSocketIn } from '../../lib/netfilter/nfnl/open-in.ts';
import type { NfnlListedElem } from '../../lib/netfilter/nfnl/elem.ts';
import { ListedPairs, ListedSlots } from './listed.ts';
import { HAIRPIN_MAPS } from './fragments.ts';

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
  const slot = Number(key.slice(cut + 3));
  if (epMaps instanceof ListedSlots) return epMaps.note(slots, slot, endpoint);
  epMaps.set(slots, new Map(epMaps.get(slots)).set(slot, endpoint));
}

/** A set or map of a terse listing whose elements are read over netlink: its key and data types (data: none for a set, 'verdict' for a verdict map). */
export interface ListedSet {
  name: string;
  key: string[];
  data: string[];
}

/** Whether the sync keeps the elements of set `name` (a fixed map or set, a shared endpoint map, the affinity map). */
function kept(name: string, fixed: Set<string>): boolean {
  return fixed.has(name) || name === AFFINITY_MAP || isSharedMap(name);
}

/** One element (key and value in nft's text form) of set `name` into `out`. */
function noteElement(out: KernelContent, name: string, k: string, v: string): void {
  const fixedEls = out.elements.get(name as FixedMapName);
  if (fixedEls !== undefined) fixedEls.set(k, v);
  else if (isSharedMap(name)) noteSlotElement(out.epMaps, name, k, v);
  else if (name === AFFINITY_MAP) {
    // client . address . proto . port -> endpoint, grouped by the affinity key after the client.
    const key = k.slice(k.indexOf(' . ') + 3);
    let g = out.affinity.get(key);
    if (g === undefined) out.affinity.set(key, (g = { clients: new Map() }));
    g.clients.set(k, v);
  }
}

/** An empty element map for fixed set `name` of a listing: the hairpin sets' packed (listed.ts). */
function listedElements(name: string): Map<string, string> {
  return (HAIRPIN_MAPS as readonly string[]).includes(name) ? new ListedPairs() : new Map();
}

/** A set's `type` or `map` member (a type name, an array of them, or `a . b`) as type names. */
function typeNames(v: unknown): string[] {
  if (Array.isArray(v)) return v.map(String);
  return typeof v === 'string' ? v.split(' . ').map((x) => x.trim()) : [];
}

/** One set or map of a listing into `out`: its elements, read one at a time (json-scan.ts); a terse listing's sets go to `sets`. */
function scanSet(t: string, at: number, out: KernelContent, fixed: Set<string>, sets: ListedSet[] | undefined): void {
  let name = '';
  let elems = -1;
  let key: unknown;
  let data: unknown;
  eachMember(t, at, (k, s, e) => {
    if (k === 'name') name = String(JSON.parse(t.slice(s, e)));
    else if (k === 'elem') elems = s;
    else if (k === 'type') key = JSON.parse(t.slice(s, e));
    else if (k === 'map') data = JSON.parse(t.slice(s, e));
  });
  if (fixed.has(name)) out.elements.set(name as FixedMapName, listedElements(name));
  if (!kept(name, fixed)) return;
  if (elems < 0) {
    sets?.push({ name, key: typeNames(key), data: typeNames(data) });
    return;
  }
  eachItem(t, elems, (s, e) => {
    const el = JSON.parse(t.slice(s, e)) as unknown;
    noteElement(out, name, formatJsonValue(Array.isArray(el) ? el[0] : el), Array.isArray(el) ? formatJsonValue(el[1]) : '');
  });
}

/**
 * Parses a JSON listing of the Service table. The text is walked, not parsed whole: at 10,000
 * Services its tree (~210,000 elements) took a resync's peak RSS from ~150 to ~240 MiB.
 */
export function parseSvcListing(json: string, sets?: ListedSet[]): KernelContent {
  const fixed = new Set<string>([...Object.keys(DYNAMIC_MAPS), ...Object.keys(DYNAMIC_SETS)]);
  const base = emptyContent();
  for (const h of HAIRPIN_MAPS) base.elements.set(h, listedElements(h));
  const out: KernelContent = { chains: new Map(), elements: base.elements, affinity: new Map(), epMaps: new ListedSlots(), allChains: new Set() };
  eachMember(json, skipSpace(json, 0), (top, at) => {
    if (top !== 'nftables') return;
    eachItem(json, at, (is) => {
      eachMember(json, is, (kind, s, e) => {
        if (kind === 'map' || kind === 'set') return scanSet(json, s, out, fixed, sets);
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

const VALUE_TYPES: ReadonlySet<string> = new Set<Exclude<NftDataType, 'verdict'>>(['ipv4_addr', 'ipv6_addr', 'inet_proto', 'inet_service', 'mark', 'ether_addr', 'ifname']);

/**
 * A set's type names as key-codec value types. `integer` is the endpoint maps' slot, `typeof numgen`:
 * 32 bits in host byte order, as the `mark` type is stored.
 */
function valueTypes(set: string, names: string[]): Array<Exclude<NftDataType, 'verdict'>> {
  return names.map((n) => {
    if (n === 'integer') return 'mark';
    if (!VALUE_TYPES.has(n)) throw new Error(`service table: set ${set} has a type weftd does not read (${n})`);
    return n as Exclude<NftDataType, 'verdict'>;
  });
}

/** A listed element's key and value in the text form `nft -j` gives (formatJsonValue). */
export function formatListedElem(set: ListedSet, e: NfnlListedElem): [string, string] {
  const k = parseKeyBytes(valueTypes(set.name, set.key), e.key).join(' . ');
  const d = e.data;
  if (d === undefined) return [k, ''];
  if (!(d instanceof Uint8Array)) return [k, 'chain' in d ? `${d.verdict} ${d.chain}` : d.verdict];
  return [k, parseKeyBytes(valueTypes(set.name, set.data), d).join(' . ')];
}

/** One element of `set` as the kernel lists it into `out`, as the same element of a JSON listing would go. */
export function noteListedElem(out: KernelContent, set: ListedSet, e: NfnlListedElem): void {
  const [k, v] = formatListedElem(set, e);
  noteElement(out, set.name, k, v);
}

/**
 * Lists the Service table in the caller's netns (or opts.netnsPath, with `sock` opened there when
 * given); null when it does not exist. Elements come over netlink a dump message at a time: at
 * 10,000 Services the whole `nft -j` text (~13 MB, held three times while nft's output was read) was
 * the largest part of a resync's peak.
 */
export function readSvcTable(opts: NftRunOptions = {}, sock?: NfnlSocket): KernelContent | null {
  const sets: ListedSet[] = [];
  const json = listJsonOrNull(['table', SVC_TABLE.family, SVC_TABLE.name], opts, true);
  if (json === null) return null;
  const out = parseSvcListing(json, sets);
  if (sets.length === 0) return out;
  const own = sock ?? openNfnlSocketIn(opts.netnsPath);
  try {
    for (const set of sets) readSetElements(own, set, out);
  } finally {
    if (sock === undefined) own.close();
  }
  return out;
}

/** One set's elements into `out`; what an interrupted dump had noted is dropped before it is read again. */
function readSetElements(sock: NfnlSocket, set: ListedSet, out: KernelContent): void {
  const restart = () => {
    out.elements.get(set.name as FixedMapName)?.clear();
    for (const slots of [...out.epMaps.keys()]) if (slots.startsWith(`${set.name}/`)) out.epMaps.delete(slots);
    if (set.name === AFFINITY_MAP) out.affinity.clear();
  };
  eachSetElem(sock, SVC_TABLE, set.name, (e) => noteListedElem(out, set, e), restart);
}

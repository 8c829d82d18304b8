// Parses `nft -j list table` output (libnftables JSON schema v1) into typed table state.
import { NftError } from './errors.ts';
import type { NftAtom, NftChainState, NftElementState, NftRuleState, NftSetState, NftTableState } from './types.ts';

type Json = Record<string, unknown>;

function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function num(v: unknown): number {
  return typeof v === 'number' ? v : -1;
}

// Element values: "10.0.0.5" | 8080 | {concat:[...]} | {prefix:{addr,len}} | {range:[a,b]} | verdicts.
function parseAtoms(v: unknown): NftAtom[] {
  if (typeof v === 'string' || typeof v === 'number') return [v];
  if (!isObj(v)) return [JSON.stringify(v)];
  if (Array.isArray(v.concat)) return v.concat.flatMap((x: unknown) => parseAtoms(x));
  if (isObj(v.prefix)) return [`${String(v.prefix.addr)}/${String(v.prefix.len)}`];
  if (Array.isArray(v.range)) return [`${String(v.range[0])}-${String(v.range[1])}`];
  for (const verdict of ['jump', 'goto']) {
    const target = v[verdict];
    if (isObj(target)) return [`${verdict} ${String(target.target)}`];
  }
  const keys = Object.keys(v);
  if (keys.length === 1 && v[keys[0] as string] === null) return [keys[0] as string]; // {"accept": null}
  return [JSON.stringify(v)];
}

// A set element is a value or {elem:{val, comment, ...}}; a map element is [keyForm, data].
function parseElement(raw: unknown): NftElementState {
  let keyForm: unknown = raw;
  let data: NftAtom[] | undefined;
  if (Array.isArray(raw)) {
    keyForm = raw[0];
    data = parseAtoms(raw[1]);
  }
  let comment: string | undefined;
  if (isObj(keyForm) && isObj(keyForm.elem)) {
    comment = str(keyForm.elem.comment);
    keyForm = keyForm.elem.val;
  }
  return {
    key: parseAtoms(keyForm),
    ...(data === undefined ? {} : { data }),
    ...(comment === undefined ? {} : { comment }),
  };
}

function parseSet(kind: 'set' | 'map', s: Json): NftSetState {
  const type = Array.isArray(s.type) ? s.type.map(String) : [String(s.type)];
  const comment = str(s.comment);
  const dataType = kind === 'map' ? (typeof s.map === 'string' ? s.map : JSON.stringify(s.map)) : undefined;
  return {
    name: String(s.name),
    kind,
    handle: num(s.handle),
    type,
    ...(dataType === undefined ? {} : { dataType }),
    flags: Array.isArray(s.flags) ? s.flags.map(String) : [],
    ...(comment === undefined ? {} : { comment }),
    elements: Array.isArray(s.elem) ? s.elem.map(parseElement) : [],
  };
}

function parseChain(c: Json): NftChainState {
  const opt = (k: string) => (c[k] === undefined ? {} : { [k]: c[k] });
  return { name: String(c.name), handle: num(c.handle), ...opt('type'), ...opt('hook'), ...opt('prio'), ...opt('policy'), rules: [] };
}

function parseRule(r: Json): NftRuleState {
  const comment = str(r.comment);
  return { handle: num(r.handle), ...(comment === undefined ? {} : { comment }), expr: Array.isArray(r.expr) ? r.expr : [] };
}

/** Parses the JSON of `nft -j list table <family> <name>` (also works for `list set`/`list chain`). */
export function parseNftListing(json: string): NftTableState {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch (cause) {
    throw new NftError('failed', 'nftables: listing is not JSON', { cause, stderr: json.slice(0, 200) });
  }
  const items = isObj(doc) && Array.isArray(doc.nftables) ? (doc.nftables as unknown[]) : [];
  const counters = new Map<string, { packets: number; bytes: number }>();
  const state: NftTableState = { family: 'inet', name: '', handle: -1, sets: new Map(), chains: new Map(), counters };
  let table: { family: string; name: string; handle: number } | undefined;
  for (const item of items) {
    if (!isObj(item)) continue;
    if (isObj(item.table)) table = { family: String(item.table.family), name: String(item.table.name), handle: num(item.table.handle) };
    if (isObj(item.set)) state.sets.set(String(item.set.name), parseSet('set', item.set));
    if (isObj(item.map)) state.sets.set(String(item.map.name), parseSet('map', item.map));
    if (isObj(item.counter)) counters.set(String(item.counter.name), { packets: num(item.counter.packets), bytes: num(item.counter.bytes) });
    if (isObj(item.chain)) state.chains.set(String(item.chain.name), parseChain(item.chain));
    if (isObj(item.rule)) {
      const chainName = String(item.rule.chain);
      let chain = state.chains.get(chainName);
      if (chain === undefined) {
        chain = { name: chainName, handle: -1, rules: [] };
        state.chains.set(chainName, chain);
      }
      chain.rules.push(parseRule(item.rule));
    }
  }
  // `list set`/`list chain` print no table object: take family and table from the first item.
  const first = items.find((i) => isObj(i) && !('metainfo' in i));
  const inner = isObj(first) ? Object.values(first).find(isObj) : undefined;
  const family = table?.family ?? str(inner?.family) ?? 'inet';
  const name = table?.name ?? str(inner?.table) ?? '';
  return { ...state, family: family as NftTableState['family'], name, handle: table?.handle ?? -1 };
}

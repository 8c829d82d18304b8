// A whole weft-owned table as data (sets with their elements, chains with their rules) and the one
// nft transaction that turns what the kernel holds into it, touching only what differs. Pure: the
// caller lists the table (listTable) or passes the content it applied last. Runs nothing itself.
import { createHash } from 'node:crypto';
import { formatBaseChain, formatSetBody } from './batch-state.ts';
import type { NftExpr } from './expr.ts';
import { isMapSpec, splitMapElement } from './map-elements.ts';
import { formatComment, formatKey, validateFamily, validateName } from './validate.ts';
import type { NftBaseChainSpec, NftKey, NftMapSpec, NftSetSpec, NftTableRef, NftTableState } from './types.ts';

/** One rule: its body and its tag (the rule comment), which names the body: same tag, same rule. */
export interface TableRule {
  readonly text: string;
  readonly tag: string;
}

/** A chain's desired content, in order. */
export interface TableChain {
  readonly base?: NftBaseChainSpec;
  readonly rules: readonly TableRule[];
}

/** A set's (or map's) desired content: its spec and its elements as formatted keys (formatKey; a map's as mapElementKey). */
export interface TableSet {
  readonly spec: NftSetSpec | NftMapSpec;
  readonly elements: ReadonlySet<string>;
}

/** A table's whole content. */
export interface TableContent {
  readonly sets: ReadonlyMap<string, TableSet>;
  readonly chains: ReadonlyMap<string, TableChain>;
  /** Named counter objects (`counter name <n>` in rules); they keep their values while chains are rewritten. */
  readonly counters?: ReadonlySet<string>;
}

/** A rule whose tag is `label` plus a hash of its body, so a changed body reads as a different rule. */
export function taggedRule(expr: NftExpr, label: string): TableRule {
  const hash = createHash('sha256').update(expr.text).digest('hex').slice(0, 10);
  const head = label.slice(0, 100);
  formatComment('rule tag', `${head} ${hash}`);
  return { text: expr.text, tag: `${head} ${hash}` };
}

/** Formats an element key the way diffTable compares them. */
export function elementKey(key: NftKey): string {
  return formatKey('element', key);
}

/**
 * What a listing (`nft -j list table`, elements included) holds, in TableContent form. Set specs are
 * not read back (names are expected to encode their type); an element the formatter refuses (a
 * range) is kept as its raw text, so that it differs and the set is rewritten.
 */
export function contentFromListing(state: NftTableState | null): TableContent {
  const sets = new Map<string, TableSet>();
  const chains = new Map<string, TableChain>();
  for (const s of state?.sets.values() ?? []) {
    const elements = new Set<string>();
    for (const e of s.elements) {
      const atoms = e.key.map((a) => (typeof a === 'string' && /^[0-9.]+\/32$|:.*\/128$/.test(a) ? a.slice(0, a.lastIndexOf('/')) : a));
      try {
        elements.add(s.kind === 'map' ? `${elementKey(atoms)} : ${formatKey('map data', e.data ?? [])}` : elementKey(atoms));
      } catch {
        elements.add(`?${atoms.join(' . ')}`);
      }
    }
    const spec = { type: s.type as NftSetSpec['type'], flags: s.flags as NonNullable<NftSetSpec['flags']> };
    sets.set(s.name, { spec: s.kind === 'map' ? { ...spec, data: (s.dataType ?? '') as NftMapSpec['data'] } : spec, elements });
  }
  const counters = new Set(state?.counters?.keys() ?? []);
  for (const c of state?.chains.values() ?? []) {
    const base = c.hook === undefined ? undefined : { type: c.type as NftBaseChainSpec['type'], hook: c.hook as NftBaseChainSpec['hook'], priority: c.prio ?? 0, ...(c.policy !== undefined ? { policy: c.policy as 'accept' | 'drop' } : {}) };
    chains.set(c.name, { ...(base !== undefined ? { base } : {}), rules: c.rules.map((r) => ({ text: '', tag: r.comment ?? '' })) });
  }
  return { sets, chains, counters };
}

/** Summary of a diff, for logs and metrics. */
export interface TableDiffStats {
  setsAdded: number;
  setsDeleted: number;
  elementsAdded: number;
  elementsDeleted: number;
  chainsRewritten: number;
  chainsDeleted: number;
}

/**
 * The transaction turning `held` into `want` (empty script: nothing differs). Order matters inside
 * one transaction: sets and elements first, then chains (policy chains before the base chains that
 * jump to them), then the elements added to maps (their verdicts may jump to a chain just added), then
 * the removal of chains, maps and sets nothing refers to any more (maps before the chains they jump to). A chain is rewritten
 * whole (flush + add) when its tag sequence differs: chains are per policy, so that stays small.
 * `held === null`: the table is absent.
 */
export function diffTable(ref: NftTableRef, held: TableContent | null, want: TableContent): { script: string; stats: TableDiffStats } {
  const p = `${validateFamily(ref.family)} ${validateName('table', ref.name)}`;
  const lines: string[] = [];
  const stats: TableDiffStats = { setsAdded: 0, setsDeleted: 0, elementsAdded: 0, elementsDeleted: 0, chainsRewritten: 0, chainsDeleted: 0 };
  if (held === null) lines.push(`add table ${p}`);
  const mapAdds: string[] = [];
  for (const [name, s] of want.sets) {
    const have = held?.sets.get(validateName('set', name));
    const interval = s.spec.flags?.includes('interval') === true;
    const map = isMapSpec(s.spec);
    // A map element is deleted by its key alone.
    const keyOf = (e: string): string => (map ? splitMapElement(e).key : e);
    if (have === undefined) {
      lines.push(`add ${map ? 'map' : 'set'} ${p} ${name} ${formatSetBody(s.spec)}`);
      stats.setsAdded++;
    }
    const add = [...s.elements].filter((e) => have?.elements.has(e) !== true);
    const del = have === undefined ? [] : [...have.elements].filter((e) => !s.elements.has(e));
    if (interval && (add.length > 0 || del.length > 0) && have !== undefined) {
      // Interval elements may have been merged or split by the kernel: rewrite the (small) set whole.
      lines.push(`flush set ${p} ${name}`);
      stats.elementsDeleted += have.elements.size;
      add.splice(0, add.length, ...s.elements);
    } else if (del.length > 0) {
      for (const chunk of chunks(del.map(keyOf))) lines.push(`delete element ${p} ${name} { ${chunk.join(', ')} }`);
      stats.elementsDeleted += del.length;
    }
    for (const chunk of chunks(add)) (map ? mapAdds : lines).push(`add element ${p} ${name} { ${chunk.join(', ')} }`);
    stats.elementsAdded += add.length;
  }
  for (const name of want.counters ?? []) if (held?.counters?.has(validateName('counter', name)) !== true) lines.push(`add counter ${p} ${name}`);
  // Regular chains first (they must exist before a jump to them), base chains last.
  const order = [...want.chains.entries()].sort(([, a], [, b]) => Number(a.base !== undefined) - Number(b.base !== undefined));
  for (const [name, c] of order) {
    const have = held?.chains.get(validateName('chain', name));
    const same = have !== undefined && have.rules.length === c.rules.length && have.rules.every((r, i) => r.tag === c.rules[i]?.tag);
    if (same) continue;
    if (have === undefined) lines.push(`add chain ${p} ${name}${c.base !== undefined ? ` ${formatBaseChain(c.base)}` : ''}`);
    else lines.push(`flush chain ${p} ${name}`);
    for (const r of c.rules) lines.push(`add rule ${p} ${name} ${r.text} comment ${formatComment('rule tag', r.tag)}`);
    stats.chainsRewritten++;
  }
  lines.push(...mapAdds);
  const gone = [...(held?.chains.keys() ?? [])].filter((n) => !want.chains.has(n));
  const goneSets = [...(held?.sets ?? [])].filter(([n]) => !want.sets.has(n));
  for (const name of gone) lines.push(`flush chain ${p} ${name}`);
  // A map's verdicts hold the chains they jump to: the map goes first.
  for (const [name, s] of goneSets) if (isMapSpec(s.spec)) lines.push(`delete map ${p} ${name}`);
  for (const name of gone) lines.push(`delete chain ${p} ${name}`);
  stats.chainsDeleted = gone.length;
  for (const name of held?.counters ?? []) if (want.counters?.has(name) !== true) lines.push(`delete counter ${p} ${name}`);
  for (const [name, s] of goneSets) if (!isMapSpec(s.spec)) lines.push(`delete set ${p} ${name}`);
  stats.setsDeleted = goneSets.length;
  return { script: lines.length === 0 ? '' : `${lines.join('\n')}\n`, stats };
}

function chunks(xs: readonly string[], n = 500): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}

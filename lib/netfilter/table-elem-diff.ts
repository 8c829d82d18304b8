// The element-only part of a whole-table diff (table-diff.ts): when two contents differ only in the
// elements of existing non-interval sets, the change can go to the kernel as one nf_tables netlink
// batch from this process (no `nft` spawned, no table read into nft's cache). Pure, except commit.
import { NfnlElemBatch } from './nfnl/set-elements.ts';
import type { NfnlElem, NfnlVerdict } from './nfnl/elem.ts';
import { formatKeyBytes } from './nfnl/key-codec.ts';
import type { NfnlSocket } from './nfnl/socket.ts';
import { isMapSpec, splitMapElement } from './map-elements.ts';
import type { TableChain, TableContent } from './table-diff.ts';
import type { NftAtom, NftDataType, NftTableRef } from './types.ts';

const ADD_PER_MESSAGE = 200;

/** Above this many element changes a delta goes to nft instead (one datagram must carry a netlink batch). */
export const MAX_NETLINK_CHANGES = 2000;

/** Elements to add to and delete from one set (or map: `data` given), as formatted keys (elementKey, mapElementKey). */
export interface SetElementDelta {
  readonly set: string;
  readonly type: NftDataType | readonly NftDataType[];
  /** A map's data type(s). */
  readonly data?: NftDataType | readonly NftDataType[];
  readonly add: readonly string[];
  readonly del: readonly string[];
}

/**
 * The element changes turning `held` into `want`, or null when anything else differs: a set or chain
 * added or removed, a chain's rules, a base chain's hook, a counter, or the elements of an interval
 * set (rewritten whole by diffTable, since the kernel may merge intervals), or more than
 * MAX_NETLINK_CHANGES elements at once. Sets unchanged are left out.
 */
export function elementOnlyDelta(held: TableContent, want: TableContent): SetElementDelta[] | null {
  if (held.sets.size !== want.sets.size || held.chains.size !== want.chains.size) return null;
  if (!sameNames(held.counters, want.counters)) return null;
  for (const [name, c] of want.chains) {
    const h = held.chains.get(name);
    if (h === undefined || h.rules.length !== c.rules.length) return null;
    if (!sameBaseChain(h, c)) return null;
    for (let i = 0; i < c.rules.length; i++) if (h.rules[i]?.tag !== c.rules[i]?.tag) return null;
  }
  return setElementDeltas(held, want);
}

/**
 * The element changes of every set of `want` against `held`, or null when a set is new, an interval
 * set's elements change (its ranges need the kernel's merge, which nft does) or the changes exceed
 * MAX_NETLINK_CHANGES. Pure.
 */
export function setElementDeltas(held: TableContent, want: TableContent): SetElementDelta[] | null {
  const out: SetElementDelta[] = [];
  for (const [name, s] of want.sets) {
    const h = held.sets.get(name);
    if (h === undefined) return null;
    // Element sets are read-only: the same set object on both sides (a set kept from the last pass) has not changed.
    if (h.elements === s.elements) continue;
    const add = [...s.elements].filter((e) => !h.elements.has(e));
    const del = [...h.elements].filter((e) => !s.elements.has(e));
    if (add.length === 0 && del.length === 0) continue;
    if (s.spec.flags?.includes('interval') === true) return null;
    out.push({ set: name, type: s.spec.type, ...(isMapSpec(s.spec) ? { data: s.spec.data } : {}), add, del });
  }
  return out.reduce((n, d) => n + d.add.length + d.del.length, 0) > MAX_NETLINK_CHANGES ? null : out;
}

/** True when two chains are both regular, or both base chains of the same hook, priority and policy. Pure. */
export function sameBaseChain(h: TableChain, c: TableChain): boolean {
  if ((h.base === undefined) !== (c.base === undefined)) return false;
  return h.base === undefined || c.base === undefined || (h.base.hook === c.base.hook && h.base.priority === c.base.priority && (h.base.policy ?? 'accept') === (c.base.policy ?? 'accept'));
}

/** An element key as formatted by elementKey (`10.0.0.1 . tcp . 80`) -> its atoms. */
export function parseElementKey(key: string): NftAtom[] {
  return key.split(' . ').map((a) => (a.length >= 2 && a.startsWith('"') && a.endsWith('"') ? a.slice(1, -1) : a));
}

type ValueTypes = Exclude<NftDataType, 'verdict'> | readonly Exclude<NftDataType, 'verdict'>[];

/** One element of a delta on the wire: its key, and for an add to a map its data (a verdict, or values of the map's data type). */
export function deltaElem(d: SetElementDelta, k: string, withData: boolean): NfnlElem {
  if (d.type === 'verdict' || (Array.isArray(d.type) && d.type.includes('verdict'))) throw new TypeError(`set ${d.set}: a verdict is no set key`);
  const { key, data } = d.data === undefined ? { key: k, data: undefined } : splitMapElement(k);
  const bytes = formatKeyBytes(d.type as ValueTypes, parseElementKey(key));
  if (!withData || d.data === undefined) return { key: bytes };
  if (data === undefined) throw new TypeError(`map ${d.set}: element ${k} has no data`);
  return { key: bytes, data: d.data === 'verdict' ? parseVerdict(d.set, data) : formatKeyBytes(d.data as ValueTypes, parseElementKey(data)) };
}

function parseVerdict(set: string, text: string): NfnlVerdict {
  const m = /^(jump|goto) (\S+)$/.exec(text);
  if (m?.[1] === 'jump' || m?.[1] === 'goto') return { verdict: m[1], chain: m[2] ?? '' };
  if (text === 'accept' || text === 'drop' || text === 'return' || text === 'continue') return { verdict: text };
  throw new TypeError(`map ${set}: ${text} is no verdict`);
}

/** The netlink batch of a delta (deletes before adds, one transaction). Throws NftError on a value the set's type refuses. */
export function elementDeltaBatch(table: NftTableRef, deltas: readonly SetElementDelta[]): NfnlElemBatch {
  const b = new NfnlElemBatch(table);
  for (const d of deltas) if (d.del.length > 0) b.delete(d.set, d.del.map((k) => deltaElem(d, k, false)));
  for (const d of deltas) {
    // A netlink attribute's length is 16 bits: a few hundred elements per message at most.
    for (let i = 0; i < d.add.length; i += ADD_PER_MESSAGE) b.add(d.set, d.add.slice(i, i + ADD_PER_MESSAGE).map((k) => deltaElem(d, k, true)));
  }
  return b;
}

/** Commits a delta over `sock` (in the socket's netns) as one transaction; returns the element count. */
export function commitElementDelta(sock: NfnlSocket, table: NftTableRef, deltas: readonly SetElementDelta[]): number {
  const b = elementDeltaBatch(table, deltas);
  b.commit(sock);
  return deltas.reduce((n, d) => n + d.add.length + d.del.length, 0);
}

function sameNames(a: ReadonlySet<string> | undefined, b: ReadonlySet<string> | undefined): boolean {
  const x = a ?? new Set<string>();
  const y = b ?? new Set<string>();
  return x.size === y.size && [...x].every((n) => y.has(n));
}

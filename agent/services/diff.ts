// Desired content vs what the kernel holds -> one transaction that changes only what differs, in
// three parts: structure first (new recorder chains, changed ones flushed and refilled), then
// element deletes and adds (fixed maps, endpoint slots, pinned clients), then chains nobody points
// to any more removed. Without structure the elements alone go over netlink. Pure.
import { AFFINITY_MAP, SVC_TABLE, type EndpointMap, type FixedMapName, type KernelContent, type SvcContent } from './content.ts';
import { FIXED_CHAINS } from './skeleton.ts';
import { assignSlots, sharedSlots } from './slots.ts';

const T = `${SVC_TABLE.family} ${SVC_TABLE.name}`;

/** One element change in nft's text form: `key` and `value` as `nft list` shows them ('' for a set or a delete). */
export interface ElemOp {
  verb: 'add' | 'delete';
  map: string;
  key: string;
  value: string;
  /** The address family of an endpoint or affinity map (their types depend on it); fixed maps have none. */
  family?: 4 | 6;
}

/** What a diff found: the transaction's parts, and counts for logs and metrics. */
export interface SvcPlan {
  /** Structure before the elements (chains and maps added, chains rewritten). */
  head: string[];
  elems: ElemOp[];
  /** Structure after the elements (unused chains and maps deleted). */
  tail: string[];
  /** The whole transaction as nft commands (head, elements, tail). */
  commands: string[];
  /** The slot assignment of every wanted endpoint map after this plan. */
  epSlots: Map<string, Map<number, string>>;
  chainsAdded: number;
  chainsChanged: number;
  chainsDeleted: number;
  elementsAdded: number;
  elementsDeleted: number;
}

function quote(s: string): string {
  return `"${s.replace(/["\\]/g, '')}"`;
}

/** One element change as an nft command. */
export function formatElemOp(e: ElemOp): string {
  return `${e.verb} element ${T} ${e.map} { ${e.verb === 'add' && e.value !== '' ? `${e.key} : ${e.value}` : e.key} }`;
}

/** The slots an endpoint map holds after it was applied: its recorded assignment, else endpoints in order. */
export function appliedSlots(m: EndpointMap): Map<number, string> {
  return m.slots ?? new Map(m.endpoints.map((e, i) => [i, e]));
}

/**
 * The transaction taking the kernel's content to the desired one (every part empty when they agree).
 * A map absent from either side holds nothing there (fragments keep only their non-empty maps).
 */
export function diffContent(want: SvcContent, have: KernelContent): SvcPlan {
  const head: string[] = [];
  const elems: ElemOp[] = [];
  const tail: string[] = [];
  const plan: SvcPlan = { head, elems, tail, commands: [], epSlots: new Map(), chainsAdded: 0, chainsChanged: 0, chainsDeleted: 0, elementsAdded: 0, elementsDeleted: 0 };
  const fixed = new Set<string>(FIXED_CHAINS);
  for (const name of want.chains.keys()) {
    if (!have.allChains.has(name)) {
      head.push(`add chain ${T} ${name}`);
      plan.chainsAdded++;
    }
  }
  for (const [name, ch] of want.chains) {
    const cur = have.chains.get(name);
    if (cur === ch.comment) continue;
    if (have.allChains.has(name)) {
      head.push(`flush chain ${T} ${name}`);
      plan.chainsChanged++;
    }
    ch.rules.forEach((r, i) => head.push(`add rule ${T} ${name} ${r}${i === 0 ? ` comment ${quote(ch.comment)}` : ''}`));
  }
  // Clients pinned to an endpoint that is gone, or to a key without affinity now: without this they would keep hitting it until the timeout.
  for (const [key, held] of have.affinity) {
    const a = want.affinity.get(key) ?? want.affinity.get(nodePortKey(key));
    for (const [client, ep] of held.clients) {
      if (a === undefined || !a.endpoints.has(ep)) elems.push({ verb: 'delete', map: AFFINITY_MAP, key: client, value: '', family: 4 });
    }
  }
  const none = new Map<string, string>();
  for (const map of new Set([...want.elements.keys(), ...have.elements.keys()])) {
    const wantEls = want.elements.get(map) ?? none;
    const haveEls = have.elements.get(map) ?? none;
    for (const [k, v] of haveEls) if (wantEls.get(k) !== v) elems.push({ verb: 'delete', map, key: k, value: '' });
    for (const [k, v] of wantEls) if (haveEls.get(k) !== v) elems.push({ verb: 'add', map, key: k, value: v });
  }
  // A key's slots: its part of a shared map (key: its address . port . slot, or nodePort . slot).
  const slotOp = (name: string, family: 4 | 6, verb: 'add' | 'delete', slot: number, value: string): ElemOp => {
    const sh = sharedSlots(name);
    if (sh === undefined) throw new Error(`service table: ${name} is no shared endpoint map`);
    return { verb, map: sh.map, key: `${sh.prefix} . ${slot}`, value, family };
  };
  for (const [name, m] of want.epMaps) {
    const { slots, ops } = assignSlots(m.endpoints, have.epMaps.get(name) ?? new Map());
    plan.epSlots.set(name, slots);
    for (const o of ops) elems.push(o.op === 'delete' ? slotOp(name, m.family, 'delete', o.slot, '') : slotOp(name, m.family, 'add', o.slot, o.endpoint));
  }
  for (const [name, held] of have.epMaps) {
    const sh = sharedSlots(name);
    if (want.epMaps.has(name) || sh === undefined) continue;
    const family = sh.family;
    for (const slot of held.keys()) elems.push(slotOp(name, family, 'delete', slot, ''));
  }
  for (const e of elems) {
    if (e.verb === 'add') plan.elementsAdded++;
    else plan.elementsDeleted++;
  }
  // Chains to remove: every one of ours that is not wanted. Flushed first (they may jump to each other), then deleted.
  const stale = [...have.allChains].filter((n) => !fixed.has(n) && !want.chains.has(n));
  for (const n of stale) tail.push(`flush chain ${T} ${n}`);
  for (const n of stale) tail.push(`delete chain ${T} ${n}`);
  plan.chainsDeleted = stale.length;
  plan.commands = [...head, ...elems.map(formatElemOp), ...tail];
  return plan;
}

/** The NodePort affinity key (`<proto> . <port>`) of a kernel group key `<node address> . <proto> . <port>`. */
export function nodePortKey(groupKey: string): string {
  return groupKey.split(' . ').slice(1).join(' . ');
}

/** Whether `slots` hold `endpoints` in their order in slots 0..n-1 (what appliedSlots gives without a recorded assignment). */
export function inOrder(slots: ReadonlyMap<number, string>, endpoints: readonly string[]): boolean {
  if (slots.size !== endpoints.length) return false;
  for (let i = 0; i < endpoints.length; i++) if (slots.get(i) !== endpoints[i]) return false;
  return true;
}

/** Records a plan's slot assignments in the endpoint maps of `want` (the next diff starts from them); one in endpoint order is not kept (most are, after a cold start). */
export function recordSlots(want: SvcContent, plan: SvcPlan): void {
  for (const [name, m] of want.epMaps) {
    const s = plan.epSlots.get(name);
    if (s === undefined) continue;
    if (inOrder(s, m.endpoints)) delete m.slots;
    else m.slots = s;
  }
}

/** The kernel content after `want` was applied in full (so the next diff needs no listing). */
export function assumeApplied(want: SvcContent): KernelContent {
  const elements = new Map<FixedMapName, Map<string, string>>();
  for (const [k, v] of want.elements) elements.set(k, new Map(v));
  return {
    chains: new Map([...want.chains].map(([n, c]) => [n, c.comment])),
    elements,
    // Client elements are the packet path's: unknown without a listing, and only ever pruned.
    affinity: new Map(),
    epMaps: new Map([...want.epMaps].map(([n, m]) => [n, appliedSlots(m)])),
    allChains: new Set([...FIXED_CHAINS, ...want.chains.keys()]),
  };
}

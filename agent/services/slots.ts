// Endpoint slots of a unit's endpoint map (numgen slot -> endpoint): the capacity fixed in the
// choosing rules, and the assignment that keeps every endpoint that stays in its slot, so a change
// of endpoints is a few element deletes and adds and never a rule change. Pure.

/** Tries at `numgen random mod capacity` before the fallback: a miss (empty slot) falls through. */
export const SLOT_TRIES = 6;

/** The smallest power of two >= n (n >= 1). */
function pow2AtLeast(n: number): number {
  let c = 1;
  while (c < n) c *= 2;
  return c;
}

/**
 * The capacity for `n` endpoints, keeping `current` while n stays in [current/2, current]: the slots
 * 0..n-1 are filled, so a try at `mod capacity` hits with probability >= 1/2, and the fallback
 * `mod capacity/2` always hits. Grows and shrinks by powers of two (a rule change, rare).
 */
export function slotCapacity(n: number, current?: number): number {
  if (n <= 0) return 1;
  if (current !== undefined && n <= current && n * 2 >= current) return current;
  return pow2AtLeast(n);
}

/** One slot change: delete the slot's element, or (re)write it to an endpoint. */
export type SlotOp = { op: 'delete'; slot: number } | { op: 'add'; slot: number; endpoint: string };

/**
 * The assignment of `want` (endpoints, any order) to slots 0..want.length-1 given what the map holds
 * (`have`, slot -> endpoint): endpoints already in a slot below the new count stay; the others fill
 * the free slots; slots at or above the count are deleted. Returns the new slots and the operations
 * (a rewritten slot is a delete then an add, in the same transaction).
 */
export function assignSlots(want: readonly string[], have: ReadonlyMap<number, string>): { slots: Map<number, string>; ops: SlotOp[] } {
  const n = want.length;
  const wanted = new Set(want);
  const slots = new Map<number, string>();
  const placed = new Set<string>();
  for (const [slot, ep] of have) {
    if (slot < n && wanted.has(ep) && !placed.has(ep)) {
      slots.set(slot, ep);
      placed.add(ep);
    }
  }
  const pending = want.filter((ep) => !placed.has(ep));
  let next = 0;
  for (let s = 0; s < n && next < pending.length; s++) if (!slots.has(s)) slots.set(s, pending[next++] as string);
  const ops: SlotOp[] = [];
  for (const [slot, ep] of have) if (slots.get(slot) !== ep) ops.push({ op: 'delete', slot });
  for (const [slot, ep] of slots) if (have.get(slot) !== ep) ops.push({ op: 'add', slot, endpoint: ep });
  return { slots, ops };
}

/** The largest capacity of the shared choosing chains; a Service port with more endpoints uses its first SHARED_MAX_CAPACITY (docs/services.md). */
export const SHARED_MAX_CAPACITY = 16_384;

/** Every capacity a shared choosing chain exists for: 1, 2, 4, ... SHARED_MAX_CAPACITY. */
export const SHARED_CAPACITIES: readonly number[] = Array.from({ length: Math.log2(SHARED_MAX_CAPACITY) + 1 }, (_, i) => 2 ** i);

/**
 * What a shared endpoint map holds: `ep` the endpoints of a Service address (ClusterIP, external
 * address) keyed address . port . slot, `epl` the node-local ones of an external address under
 * externalTrafficPolicy Local, `epn` / `epnl` the same for a NodePort, keyed nodePort . slot.
 */
export type SlotKind = 'ep' | 'epl' | 'epn' | 'epnl';

/** A shared endpoint map's name: kind, family, protocol (`ep4t`, `epnl6u`). */
export type SharedMap = `${SlotKind}${4 | 6}${'t' | 'u'}`;

/** Every shared endpoint map. */
export const SHARED_MAPS: ReadonlyArray<{ name: SharedMap; kind: SlotKind; family: 4 | 6; proto: 'tcp' | 'udp' }> = (['ep', 'epl', 'epn', 'epnl'] as const).flatMap((kind) =>
  ([4, 6] as const).flatMap((family) => (['tcp', 'udp'] as const).map((proto) => ({ name: sharedMap(family, proto, kind), kind, family, proto }))));

/** The shared map of a kind, family and protocol. */
export function sharedMap(family: 4 | 6, proto: 'tcp' | 'udp', kind: SlotKind = 'ep'): SharedMap {
  return `${kind}${family}${proto === 'tcp' ? 't' : 'u'}`;
}

/** The name of one key's slots in a shared endpoint map: `ep4t/<address> . <port>`, `epn4t/<nodePort>`. */
export function sharedSlotsName(family: 4 | 6, proto: 'tcp' | 'udp', addr: string | undefined, port: number, kind: SlotKind = 'ep'): string {
  return `${sharedMap(family, proto, kind)}/${addr === undefined ? '' : `${addr} . `}${port}`;
}

const SLOTS_RE = /^((ep|epl|epn|epnl)([46])[tu])\/(.+)$/;

/** The shared map and key prefix a slots name stands for, or undefined when it is none. */
export function sharedSlots(name: string): { map: SharedMap; prefix: string; family: 4 | 6; kind: SlotKind } | undefined {
  const m = SLOTS_RE.exec(name);
  return m === null ? undefined : { map: m[1] as SharedMap, prefix: m[4] as string, family: m[3] === '6' ? 6 : 4, kind: m[2] as SlotKind };
}

/** Whether `name` is a shared endpoint map. */
export function isSharedMap(name: string): name is SharedMap {
  return /^(ep|epl|epn|epnl)[46][tu]$/.test(name);
}

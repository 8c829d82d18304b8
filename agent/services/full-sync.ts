// A full sync in batches of Services (weftd's netns, the node's): render a few dozen Services,
// diff them against the listed kernel content, apply, drop, next; what no Service claimed is
// deleted at the end. The cold start's ~210,000 element changes at 10,000 Services therefore never
// exist at once (as a merged content, a plan or netlink bytes). Pure but for the sink it writes to.
import { AFFINITY_MAP, SVC_TABLE, type AffinityMap, type ChainContent, type EndpointMap, type FixedMapName, type KernelContent, type SvcContent } from './content.ts';
import { appliedSlots, inOrder, nodePortKey, type ElemOp } from './diff.ts';
import { HAIRPIN_MAPS, unitHairpins, type HairpinCounts } from './fragments.ts';
import type { ServicePortUnit } from './model.ts';
import { FIXED_CHAINS } from './skeleton.ts';
import { assignSlots, sharedSlots } from './slots.ts';
import { paceYoungGeneration } from '../memory.ts';

const T = `${SVC_TABLE.family} ${SVC_TABLE.name}`;

/** Where a full sync's pieces go, in order: structure through `nft -f`, element changes over netlink (each call one or more transactions). */
export interface FullSyncSink {
  structure(lines: string[]): void;
  elements(ops: ElemOp[]): void;
}

/** What a full sync did. */
export interface FullSyncResult {
  services: number;
  elementsAdded: number;
  elementsDeleted: number;
  /** The chains beyond the skeleton the table holds now (affinity recorders). */
  chains: Set<string>;
  /** Whether any piece went through nft. */
  usedNft: boolean;
}

/**
 * Services rendered, diffed and applied together; a batch is ~1,000 element changes at 10 endpoints
 * each (about one netlink transaction). Small, so that what a batch holds dies young: with 500, the
 * batches' garbage survived scavenges and the old space grew to ~3x the live heap before a full GC.
 */
export const FULL_SYNC_BATCH = 50;

/**
 * Takes the kernel from `have` (a listing, consumed: claimed parts are dropped from it as batches go)
 * to the sum of every Service's fragment. `render` gives a Service's fragment (its hairpin elements
 * are ignored: `hairpin`, reset here, counts them from the units) and units; `done` is called once a
 * Service's batch is applied, with the fragment's slot assignment recorded on it. Within a batch, new
 * endpoint slots go before the verdicts leading to them; at the end, stale verdicts go before their
 * slots. A Service present in two batches' worth of keys (the same external address) ends as the
 * later one says, as a merged content would.
 */
export function fullSync(keys: Iterable<string>, render: (key: string) => { frag: SvcContent | undefined; units: ServicePortUnit[] }, done: (key: string, frag: SvcContent | undefined, units: ServicePortUnit[]) => void, have: KernelContent, hairpin: HairpinCounts, sink: FullSyncSink, head: string[] = [], batch = FULL_SYNC_BATCH): FullSyncResult {
  const res: FullSyncResult = { services: 0, elementsAdded: 0, elementsDeleted: 0, chains: new Set(), usedNft: false };
  // What this sync already wrote (only for keys two Services claim; the bulk is claimed once and dropped from `have`).
  const doneEls = new Map<FixedMapName, Map<string, string>>();
  const doneEps = new Map<string, EndpointMap>();
  const doneAff = new Map<string, AffinityMap>();
  const doneChains = new Map<string, ChainContent>();
  hairpin.reset([]);
  const structure = (lines: string[]) => {
    if (lines.length === 0) return;
    sink.structure(lines);
    res.usedNft = true;
  };
  const elements = (ops: ElemOp[]) => {
    for (const e of ops) if (e.verb === 'add') res.elementsAdded++; else res.elementsDeleted++;
    if (ops.length > 0) sink.elements(ops);
  };
  let pending: Array<{ key: string; frag: SvcContent | undefined; units: ServicePortUnit[] }> = [];
  const flush = () => {
    const lines = head.splice(0);
    const slotOps: ElemOp[] = [];
    const verdictOps: ElemOp[] = [];
    for (const { frag, units } of pending) {
      for (const e of hairpin.update(undefined, unitHairpins(units))) {
        // First holder of this address in the sync: the kernel may have it already.
        const held = have.elements.get(e.map as FixedMapName);
        if (held?.has(e.key) === true) held.delete(e.key);
        else slotOps.push(e);
      }
      if (frag === undefined) continue;
      for (const [name, ch] of frag.chains) {
        if (doneChains.has(name)) continue;
        doneChains.set(name, ch);
        if (have.chains.get(name) === ch.comment) continue;
        if (!have.allChains.has(name)) lines.push(`add chain ${T} ${name}`);
        else lines.push(`flush chain ${T} ${name}`);
        ch.rules.forEach((r, i) => lines.push(`add rule ${T} ${name} ${r}${i === 0 ? ` comment "${ch.comment.replace(/["\\]/g, '')}"` : ''}`));
      }
      for (const [map, els] of frag.elements) {
        if ((HAIRPIN_MAPS as readonly string[]).includes(map)) continue;
        let d = doneEls.get(map);
        if (d === undefined) doneEls.set(map, (d = new Map()));
        const held = have.elements.get(map);
        for (const [k, v] of els) {
          const cur = d.has(k) ? d.get(k) : held?.get(k);
          held?.delete(k);
          d.set(k, v);
          if (cur === v) continue;
          if (cur !== undefined) verdictOps.push({ verb: 'delete', map, key: k, value: '' });
          verdictOps.push({ verb: 'add', map, key: k, value: v });
        }
      }
      for (const [name, m] of frag.epMaps) {
        const prev = doneEps.get(name);
        const heldSlots = prev !== undefined ? appliedSlots(prev) : (have.epMaps.get(name) ?? new Map<number, string>());
        have.epMaps.delete(name);
        const { slots, ops } = assignSlots(m.endpoints, heldSlots);
        if (inOrder(slots, m.endpoints)) delete m.slots;
        else m.slots = slots;
        doneEps.set(name, m);
        for (const o of ops) slotOps.push(slotOp(name, m.family, o.op, o.slot, o.op === 'add' ? o.endpoint : ''));
      }
      for (const [k, a] of frag.affinity) doneAff.set(k, a);
    }
    structure(lines);
    elements([...slotOps, ...verdictOps]);
    for (const p of pending) done(p.key, p.frag, p.units);
    res.services += pending.length;
    pending = [];
    paceYoungGeneration();
  };
  for (const key of keys) {
    pending.push({ key, ...render(key) });
    if (pending.length >= batch) flush();
  }
  flush();
  // What no Service claimed: verdicts first (nothing points at the slots then), slots, hairpin pairs, then pinned clients.
  const stale: ElemOp[] = [];
  for (const [map, els] of have.elements) {
    if ((HAIRPIN_MAPS as readonly string[]).includes(map)) continue;
    for (const k of els.keys()) stale.push({ verb: 'delete', map, key: k, value: '' });
  }
  for (const [name, held] of have.epMaps) {
    const sh = sharedSlots(name);
    if (sh !== undefined) for (const slot of held.keys()) stale.push(slotOp(name, sh.family, 'delete', slot, ''));
  }
  for (const h of HAIRPIN_MAPS) for (const k of have.elements.get(h)?.keys() ?? []) stale.push({ verb: 'delete', map: h, key: k, value: '' });
  for (const [key, held] of have.affinity) {
    const a = doneAff.get(key) ?? doneAff.get(nodePortKey(key));
    for (const [client, ep] of held.clients) if (a === undefined || !a.endpoints.has(ep)) stale.push({ verb: 'delete', map: AFFINITY_MAP, key: client, value: '', family: 4 });
  }
  elements(stale);
  const fixed = new Set<string>(FIXED_CHAINS);
  const unused = [...have.allChains].filter((n) => !fixed.has(n) && !doneChains.has(n));
  structure([...unused.map((n) => `flush chain ${T} ${n}`), ...unused.map((n) => `delete chain ${T} ${n}`)]);
  for (const n of doneChains.keys()) res.chains.add(n);
  return res;
}

/** One slot change of a key's slots (`ep4t/<address> . <port>`) as an element of its shared map. */
function slotOp(name: string, family: 4 | 6, verb: 'add' | 'delete', slot: number, value: string): ElemOp {
  const sh = sharedSlots(name);
  if (sh === undefined) throw new Error(`service table: ${name} is no shared endpoint map`);
  return { verb, map: sh.map, key: `${sh.prefix} . ${slot}`, value, family };
}

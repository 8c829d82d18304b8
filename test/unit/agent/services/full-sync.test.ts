import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serviceUnits, type ServicePortUnit } from '../../../../agent/services/model.ts';
import { capacitiesOf, renderAll } from '../../../../agent/services/render.ts';
import { assumeApplied, diffContent, type ElemOp } from '../../../../agent/services/diff.ts';
import { nothingHeld } from '../../../../agent/services/apply.ts';
import { fullSync, type FullSyncSink } from '../../../../agent/services/full-sync.ts';
import { HairpinCounts, compactContent, mergeAll, unitHairpins, withoutHairpin } from '../../../../agent/services/fragments.ts';
import { AFFINITY_MAP, DYNAMIC_MAPS, DYNAMIC_SETS, type FixedMapName, type KernelContent, type SvcContent } from '../../../../agent/services/content.ts';
import { isSharedMap } from '../../../../agent/services/slots.ts';
import { noteSlotElement } from '../../../../agent/services/kernel.ts';
import { FIXED_CHAINS } from '../../../../agent/services/skeleton.ts';
import { NODE, ep, port, slice, svc } from './fixtures.ts';
import type { EndpointSlice, Service } from '../../../../agent/services/types.ts';

/** A kernel table as element maps and chains; strict as nf_tables is: deleting what is absent or re-adding with other data throws. */
class FakeTable implements FullSyncSink {
  readonly maps = new Map<string, Map<string, string>>();
  readonly chains = new Map<string, string>(FIXED_CHAINS.map((c) => [c, '']));
  transactions = 0;
  readonly log: ElemOp[] = [];
  structure(lines: string[]): void {
    for (const l of lines) {
      const [verb, what, , , name = ''] = l.split(' ');
      if (what !== 'chain' && what !== 'rule') continue;
      if (verb === 'add' && what === 'chain') this.chains.set(name, '');
      else if (verb === 'flush') this.chains.set(name, '');
      else if (verb === 'delete') this.chains.delete(name);
      else if (this.chains.get(name) === '') this.chains.set(name, /comment "([^"]*)"/.exec(l)?.[1] ?? '');
    }
  }
  elements(ops: ElemOp[]): void {
    this.transactions++;
    this.log.push(...ops);
    for (const o of ops) {
      let m = this.maps.get(o.map);
      if (m === undefined) this.maps.set(o.map, (m = new Map()));
      if (o.verb === 'delete') {
        if (!m.delete(o.key)) throw new Error(`delete of absent ${o.map} ${o.key}`);
      } else if (m.has(o.key) && m.get(o.key) !== o.value) throw new Error(`add over ${o.map} ${o.key}`);
      else m.set(o.key, o.value);
    }
  }
  /** What a listing of the table would give back. */
  listing(): KernelContent {
    const have = nothingHeld();
    for (const [c, comment] of this.chains) {
      have.allChains.add(c);
      have.chains.set(c, comment);
    }
    for (const [map, els] of this.maps) {
      if (map in DYNAMIC_MAPS || map in DYNAMIC_SETS) have.elements.set(map as FixedMapName, new Map(els));
      else if (map === AFFINITY_MAP) continue;
      else if (isSharedMap(map)) {
        for (const [k, v] of els) noteSlotElement(have.epMaps, map, k, v);
      }
    }
    return have;
  }
  /** The table with each key's slots as its sorted endpoints (slot numbers depend on history; the set in slots 0..n-1 does not). */
  normal(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const [map, els] of this.maps) {
      if (!isSharedMap(map)) {
        if (els.size > 0) out[map] = [...els].map(([k, v]) => `${k} : ${v}`).sort();
        continue;
      }
      const byKey = new Map<string, string[]>();
      for (const [k, v] of els) {
        const cut = k.lastIndexOf(' . ');
        const key = `${map}/${k.slice(0, cut)}`;
        byKey.set(key, [...(byKey.get(key) ?? []), v]);
        assert.ok(Number(k.slice(cut + 3)) < els.size, `slot ${k} beyond the count`);
      }
      for (const [key, eps] of byKey) out[key] = eps.sort();
    }
    out['chains'] = [...this.chains].map(([c, x]) => `${c} ${x}`).sort();
    return out;
  }
}

type Cluster = { services: Map<string, Service>; slices: Map<string, EndpointSlice[]> };

/** n Services: ClusterIPs whose endpoints overlap (shared hairpin pairs), an ETP Local NodePort, ClientIP affinity, none without endpoints, and two sharing an external address. */
function cluster(n: number, shift = 0): Cluster {
  const services = new Map<string, Service>();
  const slices = new Map<string, EndpointSlice[]>();
  for (let i = 0; i < n; i++) {
    const spec: NonNullable<Service['spec']> = { clusterIP: `10.96.0.${i + 1}`, ports: [port('http', 80, i % 7 === 3 ? { nodePort: 30000 + i } : {})] };
    if (i % 7 === 3) Object.assign(spec, { type: 'NodePort', externalTrafficPolicy: 'Local' });
    if (i % 5 === 1) Object.assign(spec, { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 + (i % 2) * 60 } } });
    if (i === 4 || i === 6) spec.externalIPs = ['192.0.2.9'];
    services.set(`default/s${i}`, svc(`s${i}`, spec));
    const eps = i === 2 ? [] : Array.from({ length: 1 + ((i + shift) % 4) }, (_, e) => ep(`10.244.${(i + e + shift) % 6}.${e + 1}`, e === 0 ? 'n1' : 'n2'));
    slices.set(`default/s${i}`, [slice(`s${i}-a`, `s${i}`, eps, [{ name: 'http', port: 8080 }])]);
  }
  return { services, slices };
}

/** The proxy's side of a full sync: render per Service, keep what the next render's capacities come from and the units once applied. */
function run(c: Cluster, table: FakeTable, batch: number, stored = new Map<string, SvcContent>()): { stored: Map<string, SvcContent>; units: Map<string, ServicePortUnit[]>; hairpin: HairpinCounts } {
  const units = new Map<string, ServicePortUnit[]>();
  const hairpin = new HairpinCounts();
  const render = (k: string) => {
    const u = serviceUnits(c.services.get(k)!, c.slices.get(k) ?? [], NODE);
    return { frag: compactContent(renderAll(u, NODE, capacitiesOf(stored.get(k)))), units: u };
  };
  fullSync(c.services.keys(), render, (k, frag, u) => {
    if (frag !== undefined) stored.set(k, frag);
    units.set(k, u);
  }, table.listing(), hairpin, table, [], batch);
  for (const k of [...stored.keys()]) if (!c.services.has(k)) stored.delete(k);
  return { stored, units, hairpin };
}

void describe('services full sync in batches', () => {
  it('a cold sync in batches of 1, 3 or all ends with the table one merged diff makes', () => {
    const c = cluster(23);
    const frags = [...c.services.keys()].map((k) => renderAll(serviceUnits(c.services.get(k)!, c.slices.get(k) ?? [], NODE), NODE));
    const once = new FakeTable();
    const plan = diffContent(mergeAll(frags), nothingHeld());
    once.structure(plan.head);
    once.elements(plan.elems);
    const want = once.normal();
    assert.ok((want['hairpin4'] ?? []).length < 23 * 2, 'endpoints are shared between Services');
    assert.ok(want['chains']?.some((x) => x.startsWith('affrec4-660 ')) === true && want['chains'].some((x) => x.startsWith('affrec4-600 ')));
    for (const batch of [1, 3, 1000]) {
      const t = new FakeTable();
      run(c, t, batch);
      assert.deepEqual(t.normal(), want, `batch ${batch}`);
      if (batch === 1) assert.ok(t.transactions >= 23);
    }
  });

  it('from a table holding another cluster: changed endpoints rewritten, gone Services and an unused recorder chain removed, a second sync rewrites only a doubly claimed key', () => {
    const t = new FakeTable();
    run(cluster(30, 1), t, 4);
    const fresh = new FakeTable();
    run(cluster(17), fresh, 1000);
    // Without the old capacities (their hysteresis would keep some larger than a cold start's).
    run(cluster(17), t, 4);
    assert.deepEqual(t.normal(), fresh.normal());
    // A second full sync changes nothing but the key two Services claim (the external address: the later one is written again over the earlier).
    const before = t.log.length;
    run(cluster(17), t, 4);
    const again = t.log.slice(before);
    assert.ok(again.length > 0 && again.every((o) => o.key.startsWith('192.0.2.9 . ')), JSON.stringify(again));
  });

  it('an update after a batched sync, diffed against the stored fragments, reaches the table a full sync would', () => {
    const t = new FakeTable();
    const c = cluster(20);
    const s = run(c, t, 3);
    const next = cluster(20, 2);
    for (const k of ['default/s5', 'default/s10', 'default/s3']) {
      const u = serviceUnits(next.services.get(k)!, next.slices.get(k) ?? [], NODE);
      const frag = compactContent(renderAll(u, NODE, capacitiesOf(s.stored.get(k))));
      const per = (x: SvcContent) => ({ ...withoutHairpin(x), chains: new Map() });
      const plan = diffContent(per(frag), assumeApplied(per(s.stored.get(k)!)));
      t.elements([...plan.elems, ...s.hairpin.update(unitHairpins(s.units.get(k)), unitHairpins(u))]);
      c.slices.set(k, next.slices.get(k)!);
    }
    const fresh = new FakeTable();
    run(c, fresh, 1000, new Map(s.stored));
    assert.deepEqual(t.normal(), fresh.normal());
  });
});

// Units -> the Service table's desired content, elements only: every Service port is served by the
// skeleton's shared chains (per family, protocol, behaviour and slot capacity; skeleton.ts) through
// elements of shared maps keyed by what the packet carries: its address or NodePort -> a verdict,
// and address . port . slot (nodePort . slot) -> an endpoint. The one kind of chain made as Services
// need it is an affinity timeout's recorder (one per distinct timeout, shared). Pure.
import { createHash } from 'node:crypto';
import type { Backend } from './endpoints.ts';
import { emptyContent, type FixedMapName, type SvcContent } from './content.ts';
import type { ServicePortUnit } from './model.ts';
import { SHARED_MAX_CAPACITY, sharedSlotsName, slotCapacity, type SlotKind } from './slots.ts';
import { affinityRecorderName, affinityRecorderRules, behaviourChain, pickChainName } from './shared-chains.ts';

/** The capacities the endpoint slots had (by slots name), so a count change inside [c/2, c] keeps its chain. */
export type Capacities = ReadonlyMap<string, number>;

export { ipKw, slotRules, sharedChainRules } from './shared-chains.ts';

function addChain(c: SvcContent, name: string, rules: string[]): void {
  const digest = createHash('sha256').update(rules.join('\n')).digest('hex').slice(0, 12);
  c.chains.set(name, { comment: digest, rules });
}

/** Adds one unit's map elements (and the recorder chain of its affinity timeout) to `c`; `caps` are its slots' current capacities. */
export function renderUnit(u: ServicePortUnit, c: SvcContent, caps?: Capacities): void {
  const f = u.family === 4 ? '4' : '6';
  const el = (m: string) => {
    const mm = c.elements.get(`${m}${f}` as FixedMapName);
    if (mm === undefined) throw new Error(`no map ${m}${f}`);
    return mm;
  };
  const reject = 'goto reject-chain';
  for (const b of [...u.cluster, ...u.internal, ...u.external]) el('hairpin').set(`${b.ip} . ${b.ip}`, '');
  const svcKey = u.clusterIP === undefined ? undefined : `${u.clusterIP} . ${u.proto} . ${u.port}`;
  if (!u.hasEndpoints) {
    if (svcKey !== undefined) el('noep').set(svcKey, reject);
    for (const a of u.externalAddrs) el('noep').set(`${a} . ${u.proto} . ${u.port}`, reject);
    if (u.nodePort !== undefined) el('noepnp').set(`${u.proto} . ${u.nodePort}`, reject);
    return;
  }
  // A key's endpoints in its slots of a shared map; returns the choosing chain of their capacity.
  const slots = (kind: SlotKind, addr: string | undefined, port: number, eps: Backend[]): string => {
    const name = sharedSlotsName(u.family, u.proto, addr, port, kind);
    const endpoints = eps.slice(0, SHARED_MAX_CAPACITY).map((b) => `${b.ip} . ${b.port}`);
    const capacity = slotCapacity(endpoints.length, caps?.get(name));
    c.epMaps.set(name, { family: u.family, proto: u.proto, capacity, endpoints, unit: u.key });
    return pickChainName(kind, u.family, u.proto, capacity);
  };
  const aff = u.affinitySeconds;
  const pin = (key: string, eps: Backend[], np: boolean) => {
    if (aff === undefined) return;
    const rec = affinityRecorderName(aff);
    if (!c.chains.has(rec)) addChain(c, rec, affinityRecorderRules(aff));
    c.elements.get(np ? 'affrecnp4' : 'affrec4')?.set(key, `goto ${rec}`);
    c.affinity.set(key, { family: u.family, timeoutSeconds: aff, endpoints: new Set(eps.map((b) => `${b.ip} . ${b.port}`)) });
  };
  const withAff = aff !== undefined;
  if (svcKey !== undefined) {
    if (u.internal.length === 0) el('noep').set(svcKey, 'drop');
    else {
      const pick = slots('ep', u.clusterIP, u.port, u.internal);
      if (!withAff) el('svc').set(svcKey, `goto ${pick}`);
      else {
        el('svc').set(svcKey, `goto ${behaviourChain('cluster', u.family, u.proto, true)}`);
        el('pick').set(svcKey, `goto ${pick}`);
        pin(svcKey, u.internal, false);
      }
    }
  }
  for (const a of u.externalAddrs) {
    const k = `${a} . ${u.proto} . ${u.port}`;
    if (!u.etpLocal) {
      el('svc').set(k, `goto ${behaviourChain('ext', u.family, u.proto, withAff)}`);
      el('pick').set(k, `goto ${slots('ep', a, u.port, u.external)}`);
      pin(k, u.external, false);
      continue;
    }
    // ETP Local: pods and the node itself go to every endpoint (kube-proxy's short-circuit), other sources to the local ones, source kept.
    el('svc').set(k, `goto ${behaviourChain('extLocal', u.family, u.proto, withAff)}`);
    el('pick').set(k, `goto ${slots('ep', a, u.port, u.cluster)}`);
    if (u.external.length > 0) el('pickl').set(k, `goto ${slots('epl', a, u.port, u.external)}`);
    else el('noep').set(k, 'drop');
    pin(k, [...u.cluster, ...u.external], false);
  }
  if (u.nodePort !== undefined) {
    const k = `${u.proto} . ${u.nodePort}`;
    if (!u.etpLocal) {
      el('np').set(k, `goto ${behaviourChain('nodePort', u.family, u.proto, withAff)}`);
      el('picknp').set(k, `goto ${slots('epn', undefined, u.nodePort, u.external)}`);
      pin(k, u.external, true);
    } else {
      el('np').set(k, `goto ${behaviourChain('nodePortLocal', u.family, u.proto, withAff)}`);
      el('picknp').set(k, `goto ${slots('epn', undefined, u.nodePort, u.cluster)}`);
      if (u.external.length > 0) el('picknpl').set(k, `goto ${slots('epnl', undefined, u.nodePort, u.external)}`);
      else el('noepnp').set(k, 'drop');
      pin(k, [...u.cluster, ...u.external], true);
    }
  }
}

/** The desired content for every unit. */
export function renderAll(units: readonly ServicePortUnit[], _node?: unknown, caps?: Capacities): SvcContent {
  const c = emptyContent();
  for (const u of units) renderUnit(u, c, caps);
  return c;
}

/** The endpoint slots' capacities of a rendered content. */
export function capacitiesOf(c: SvcContent | undefined): Map<string, number> {
  return new Map([...(c?.epMaps ?? new Map())].map(([n, m]) => [n, m.capacity]));
}

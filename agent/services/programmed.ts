// What the Service proxy keeps of each programmed Service between syncs: its units as one string,
// plus the slot state a render cannot give back (capacities kept by hysteresis, slot assignments
// out of endpoint order). An incremental sync's "before" is re-rendered from it (only for the
// Services that sync touches), so no rendered fragment or unit object stays in memory: at 10,000
// Services x 10 endpoints ~2.5 MiB instead of ~31 MiB. Pure.
import type { Backend } from './endpoints.ts';
import { unitId, type ServicePortUnit } from './model.ts';
import { renderAll } from './render.ts';
import { compactContent } from './fragments.ts';
import type { SvcContent } from './content.ts';
import { slotCapacity } from './slots.ts';

/** One programmed Service (see the module comment). */
export interface Programmed {
  /** encodeUnits of its units (never empty: a Service without units keeps no record). */
  units: string;
  /** Slots names -> capacity, only where it is not what a render without history gives. */
  caps?: Map<string, number>;
  /** Slots names -> the slot assignment, only where it is not endpoint order. */
  slots?: Map<string, Map<number, string>>;
}

// Separators no field holds: keys are DNS labels and '/', addresses have no space, '|' or ','.
const UNIT = '\n';
const FIELD = '|';
const LIST = ' ';

/** A backend as `ip,port,flags` (flags: 1 local, 2 ready, 4 serving-terminating). */
function encodeBackend(b: Backend): string {
  return `${b.ip},${b.port},${(b.local ? 1 : 0) | (b.ready ? 2 : 0) | (b.servingTerminating ? 4 : 0)}`;
}

function decodeBackends(s: string): Backend[] {
  if (s === '') return [];
  return s.split(LIST).map((x) => {
    const [ip = '', port = '0', f = '0'] = x.split(',');
    const flags = Number(f);
    return { ip, port: Number(port), local: (flags & 1) !== 0, ready: (flags & 2) !== 0, servingTerminating: (flags & 4) !== 0 };
  });
}

const opt = (n: number | undefined) => (n === undefined ? '' : String(n));
const num = (s: string | undefined) => (s === undefined || s === '' ? undefined : Number(s));

/** The units of one Service as one string; internal and external are the cluster or the local choice, so only those two lists are kept. */
export function encodeUnits(units: readonly ServicePortUnit[]): string {
  return units.map((u) => {
    const local = u.itpLocal ? u.internal : u.etpLocal ? u.external : [];
    return [u.key, u.port, u.clusterIP ?? '', u.externalAddrs.join(','), opt(u.nodePort), opt(u.healthCheckNodePort), opt(u.affinitySeconds),
      `${u.etpLocal ? 'e' : ''}${u.itpLocal ? 'i' : ''}`, u.cluster.map(encodeBackend).join(LIST), local.map(encodeBackend).join(LIST)].join(FIELD);
  }).join(UNIT);
}

/** The units encodeUnits was given, as serviceUnits made them. */
export function decodeUnits(s: string): ServicePortUnit[] {
  if (s === '') return [];
  return s.split(UNIT).map((line): ServicePortUnit => {
    const [key = '', port, clusterIP = '', ext = '', nodePort, hc, aff, flags = '', cluster = '', local = ''] = line.split(FIELD);
    const parts = key.split('/');
    const etpLocal = flags.includes('e');
    const itpLocal = flags.includes('i');
    const c = decodeBackends(cluster);
    const l = decodeBackends(local);
    const np = num(nodePort);
    const hcnp = num(hc);
    const affinitySeconds = num(aff);
    return {
      key, id: unitId(key), family: parts[parts.length - 1] === 'v6' ? 6 : 4, proto: parts[parts.length - 2] === 'udp' ? 'udp' : 'tcp', port: Number(port),
      ...(clusterIP !== '' ? { clusterIP } : {}), externalAddrs: ext === '' ? [] : ext.split(','),
      ...(np !== undefined ? { nodePort: np } : {}),
      ...(hcnp !== undefined ? { healthCheckNodePort: hcnp } : {}),
      ...(affinitySeconds !== undefined ? { affinitySeconds } : {}),
      etpLocal, itpLocal, internal: itpLocal ? l : c, external: etpLocal ? l : c, cluster: c, hasEndpoints: c.length > 0 || l.length > 0,
    };
  });
}

/** The record of a Service once `frag` (rendered from `units`, its slots recorded) is applied; undefined without units. */
export function programmedOf(frag: SvcContent | undefined, units: readonly ServicePortUnit[]): Programmed | undefined {
  if (units.length === 0) return undefined;
  const p: Programmed = { units: encodeUnits(units) };
  for (const [name, m] of frag?.epMaps ?? []) {
    if (m.capacity !== slotCapacity(m.endpoints.length)) (p.caps ??= new Map()).set(name, m.capacity);
    if (m.slots !== undefined) (p.slots ??= new Map()).set(name, m.slots);
  }
  return p;
}

/** A programmed Service's units and the fragment they were applied as (re-rendered: the same capacities and slots). */
export function replay(p: Programmed | undefined): { frag: SvcContent | undefined; units: ServicePortUnit[] } {
  if (p === undefined) return { frag: undefined, units: [] };
  const units = decodeUnits(p.units);
  const frag = compactContent(renderAll(units, undefined, p.caps));
  for (const [name, s] of p.slots ?? []) {
    const m = frag.epMaps.get(name);
    if (m !== undefined) m.slots = s;
  }
  return { frag, units };
}

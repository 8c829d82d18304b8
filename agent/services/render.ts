// Units -> the Service table's desired content: per unit a chain for internal traffic (svc-), one
// for external traffic (ext-), endpoint-choice chains (epc-/epl-: numgen into the unit's endpoint
// map mepc-/mepl-, slot -> endpoint), and with ClientIP affinity a chain per endpoint (aff-: record
// the client) plus a dynamic map. Pure.
import { createHash } from 'node:crypto';
import type { Backend } from './endpoints.ts';
import { emptyContent, type SvcContent } from './content.ts';
import type { ServicePortUnit } from './model.ts';
import type { ProxyNodeConfig } from './types.ts';
import { familyOfText } from '../../lib/ip/index.ts';
import { SHARED_MAX_CAPACITY, SLOT_TRIES, sharedMap, sharedSlotsName, slotCapacity } from './slots.ts';

/** The capacities the endpoint maps had (by map name), so a count change inside [c/2, c] keeps its rules. */
export type Capacities = ReadonlyMap<string, number>;

/** nft's address family keyword for a family. */
export function ipKw(family: 4 | 6): 'ip' | 'ip6' {
  return family === 4 ? 'ip' : 'ip6';
}

function target(b: Backend, family: 4 | 6): string {
  return family === 4 ? `${b.ip}:${b.port}` : `[${b.ip}]:${b.port}`;
}

function epHash(b: Backend): string {
  return createHash('sha256').update(`${b.ip}|${b.port}`).digest('hex').slice(0, 8);
}

/** The name of the ClientIP affinity map of a unit. */
export function affinityMapName(id: string): string {
  return `aff-${id}`;
}

/** The name of the endpoint map a choosing chain looks its slots up in. */
export function epMapName(chain: string): string {
  return `m${chain}`;
}

/**
 * The rules choosing one of the endpoints in map `map` of capacity `cap`: a few tries at a slot below
 * the capacity (a try at an empty slot falls through to the next), then a last one below cap/2,
 * where every slot is filled. Each try hits with probability >= 1/2, so the last rule takes at most
 * 1/2^SLOT_TRIES of new connections. The rules depend on the capacity only, never on the endpoints.
 */
export function slotRules(proto: 'tcp' | 'udp', family: 4 | 6, map: string, cap: number): string[] {
  const ip = ipKw(family);
  const rule = (mod: number) => `meta l4proto ${proto} dnat ${ip} to numgen random mod ${mod} map @${map}`;
  if (cap <= 1) return [rule(1)];
  return [...Array.from({ length: SLOT_TRIES }, () => rule(cap)), rule(cap / 2)];
}

/** The name of the shared choosing chain of a family, protocol and capacity (one for every ClusterIP-only unit of them). */
export function sharedChainName(family: 4 | 6, proto: 'tcp' | 'udp', cap: number): string {
  return `svcc${family}${proto === 'tcp' ? 't' : 'u'}-${cap}`;
}

/**
 * The rules of a shared choosing chain: masquerade off-cluster sources, then as slotRules, with the
 * Service's own address . port in front of the slot in the key of the shared map. (One map per
 * protocol: nft 1.0.6 cannot read back a map keyed on `meta l4proto . th dport` once it has elements.)
 */
export function sharedChainRules(family: 4 | 6, proto: 'tcp' | 'udp', cap: number, node: ProxyNodeConfig): string[] {
  const ip = ipKw(family);
  const masq = offCluster(family, node);
  const rule = (mod: number) => `meta l4proto ${proto} dnat ${ip} to ${ip} daddr . ${proto} dport . numgen random mod ${mod} map @${sharedMap(family, proto)}`;
  const tries = cap <= 1 ? [rule(1)] : [...Array.from({ length: SLOT_TRIES }, () => rule(cap)), rule(cap / 2)];
  return [...(masq !== undefined ? [`${masq} jump mark-masq`] : []), ...tries];
}

/** The rules choosing one of `eps` (non-empty) at random, with affinity when the unit has it. */
function choiceRules(u: ServicePortUnit, eps: Backend[], c: SvcContent, chain: string, caps: Capacities | undefined): string[] {
  const ip = ipKw(u.family);
  const rules: string[] = [];
  if (u.affinitySeconds !== undefined) {
    const aff = affinityMapName(u.id);
    const a = c.affinity.get(aff) ?? { family: u.family, timeoutSeconds: u.affinitySeconds, endpoints: new Set<string>() };
    c.affinity.set(aff, a);
    rules.push(`meta l4proto ${u.proto} dnat ${ip} to ${ip} saddr map @${aff}`);
    const vmap = eps.map((b, i) => {
      const name = `aff-${u.id}-${epHash(b)}`;
      a.endpoints.add(`${b.ip} . ${b.port}`);
      addChain(c, name, u.key, [
        `update @${aff} { ${ip} saddr timeout ${u.affinitySeconds}s : ${b.ip} . ${b.port} }`,
        `meta l4proto ${u.proto} dnat ${ip} to ${target(b, u.family)}`,
      ]);
      return `${i} : goto ${name}`;
    });
    rules.push(`numgen random mod ${eps.length} vmap { ${vmap.join(', ')} }`);
    return rules;
  }
  const map = epMapName(chain);
  const capacity = slotCapacity(eps.length, caps?.get(map));
  c.epMaps.set(map, { family: u.family, proto: u.proto, capacity, endpoints: eps.map((b) => `${b.ip} . ${b.port}`) });
  return slotRules(u.proto, u.family, map, capacity);
}

function addChain(c: SvcContent, name: string, key: string, rules: string[]): void {
  const digest = createHash('sha256').update(rules.join('\n')).digest('hex').slice(0, 12);
  // nft keeps at most 128 bytes of a rule comment; the digest is what the diff compares.
  const comment = `${digest} ${key}`.slice(0, 120);
  c.chains.set(name, { comment, rules });
}

/** Sources outside the cluster networks of `family` (masqueraded towards a ClusterIP), or undefined without any. */
function offCluster(family: 4 | 6, node: ProxyNodeConfig): string | undefined {
  const cidrs = node.clusterCidrs.filter((x) => familyOfText(x.split('/')[0] ?? '') === family);
  if (cidrs.length === 0) return undefined;
  return `${ipKw(family)} saddr != { ${cidrs.join(', ')} }`;
}

/** Adds one unit's chains and map elements to `c`; `caps` are the endpoint maps' current capacities. */
export function renderUnit(u: ServicePortUnit, node: ProxyNodeConfig, c: SvcContent, caps?: Capacities): void {
  const f = u.family === 4 ? '4' : '6';
  const el = (m: 'svc' | 'np' | 'noep' | 'noepnp' | 'hairpin') => {
    const mm = c.elements.get(`${m}${f}` as never);
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
  const masq = offCluster(u.family, node);
  const masqRules = masq !== undefined ? [`${masq} jump mark-masq`] : [];
  if (svcKey !== undefined && u.externalAddrs.length === 0 && u.nodePort === undefined) {
    // ClusterIP only (most Services): no chain of its own (a commit's cost grows with the chains of the
    // netns); its slots sit in the family's shared map behind its own address, chosen by the shared
    // chain of its capacity. With affinity or too many endpoints, the choice sits in svc- itself.
    const shared = sharedSlotsName(u.family, u.proto, u.clusterIP as string, u.port);
    const sharedCap = slotCapacity(u.internal.length, caps?.get(shared));
    if (u.internal.length === 0) el('noep').set(svcKey, 'drop');
    else if (u.affinitySeconds === undefined && sharedCap <= SHARED_MAX_CAPACITY) {
      c.epMaps.set(shared, { family: u.family, proto: u.proto, capacity: sharedCap, endpoints: u.internal.map((b) => `${b.ip} . ${b.port}`) });
      el('svc').set(svcKey, `goto ${sharedChainName(u.family, u.proto, sharedCap)}`);
    } else {
      addChain(c, `svc-${u.id}`, u.key, [...masqRules, ...choiceRules(u, u.internal, c, `ep${u.internal === u.cluster ? 'c' : 'l'}-${u.id}`, caps)]);
      el('svc').set(svcKey, `goto svc-${u.id}`);
    }
    return;
  }
  const chooser = (eps: Backend[], suffix: string) => {
    const name = `ep${suffix}-${u.id}`;
    if (!c.chains.has(name)) addChain(c, name, u.key, choiceRules(u, eps, c, name, caps));
    return name;
  };
  const clusterChain = u.cluster.length > 0 ? chooser(u.cluster, 'c') : undefined;
  const pick = (eps: Backend[]) => (eps === u.cluster ? clusterChain : eps.length > 0 ? chooser(eps, 'l') : undefined);
  const internal = pick(u.internal);
  if (svcKey !== undefined) {
    if (internal === undefined) el('noep').set(svcKey, 'drop');
    else {
      addChain(c, `svc-${u.id}`, u.key, [...masqRules, `goto ${internal}`]);
      el('svc').set(svcKey, `goto svc-${u.id}`);
    }
  }
  if (u.externalAddrs.length === 0 && u.nodePort === undefined) return;
  const external = pick(u.external);
  const ext: string[] = [];
  if (!u.etpLocal) {
    if (external !== undefined) ext.push('jump mark-masq', `goto ${external}`);
  } else {
    // ETP Local: pods and the node itself reach an external address as cluster traffic (kube-proxy's short-circuit); the source is kept.
    const inCluster = offCluster(u.family, node)?.replace(' != ', ' ');
    if (clusterChain !== undefined) {
      if (inCluster !== undefined) ext.push(`${inCluster} goto ${clusterChain}`);
      ext.push(`fib saddr type local jump mark-masq`, `fib saddr type local goto ${clusterChain}`);
    }
    if (external !== undefined) ext.push(`goto ${external}`);
  }
  if (ext.length > 0) addChain(c, `ext-${u.id}`, u.key, ext);
  const extVerdict = ext.length > 0 ? `goto ext-${u.id}` : undefined;
  for (const a of u.externalAddrs) {
    const k = `${a} . ${u.proto} . ${u.port}`;
    if (extVerdict !== undefined) el('svc').set(k, extVerdict);
    if (external === undefined) el('noep').set(k, 'drop');
  }
  if (u.nodePort !== undefined) {
    const k = `${u.proto} . ${u.nodePort}`;
    if (extVerdict !== undefined) el('np').set(k, extVerdict);
    if (external === undefined) el('noepnp').set(k, 'drop');
  }
}

/** The desired content for every unit. */
export function renderAll(units: readonly ServicePortUnit[], node: ProxyNodeConfig, caps?: Capacities): SvcContent {
  const c = emptyContent();
  for (const u of units) renderUnit(u, node, c, caps);
  return c;
}

/** The endpoint maps' capacities of a rendered content. */
export function capacitiesOf(c: SvcContent | undefined): Map<string, number> {
  return new Map([...(c?.epMaps ?? new Map())].map(([n, m]) => [n, m.capacity]));
}

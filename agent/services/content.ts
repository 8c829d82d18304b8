// The dynamic part of weft's Service table as plain data (chains by name with their rules, and the
// elements of its maps and sets), the form both the desired state and a kernel listing take. Pure.

/** weft's Service table (inet: one table serves both families). */
export const SVC_TABLE = { family: 'inet', name: 'weft-svc' } as const;

/** The mark bit kube-proxy uses for "masquerade this" (KUBE-MARK-MASQ); weftd --ip-masq leaves such packets alone. */
export const MASQ_MARK = 0x4000;

/** Maps (and sets) whose elements the diff keeps in step; keyed by name, element key -> value ('' for a set). */
export const DYNAMIC_MAPS = {
  svc4: 'type ipv4_addr . inet_proto . inet_service : verdict',
  svc6: 'type ipv6_addr . inet_proto . inet_service : verdict',
  np4: 'type inet_proto . inet_service : verdict',
  np6: 'type inet_proto . inet_service : verdict',
  noep4: 'type ipv4_addr . inet_proto . inet_service : verdict',
  noep6: 'type ipv6_addr . inet_proto . inet_service : verdict',
  noepnp4: 'type inet_proto . inet_service : verdict',
  noepnp6: 'type inet_proto . inet_service : verdict',
  // Second lookups of the behaviour chains (address or NodePort -> the choosing chain of the key's capacity).
  pick4: 'type ipv4_addr . inet_proto . inet_service : verdict',
  pick6: 'type ipv6_addr . inet_proto . inet_service : verdict',
  pickl4: 'type ipv4_addr . inet_proto . inet_service : verdict',
  pickl6: 'type ipv6_addr . inet_proto . inet_service : verdict',
  picknp4: 'type inet_proto . inet_service : verdict',
  picknp6: 'type inet_proto . inet_service : verdict',
  picknpl4: 'type inet_proto . inet_service : verdict',
  picknpl6: 'type inet_proto . inet_service : verdict',
  // ClientIP affinity: the original destination of a new DNATed connection -> the chain recording its client with the Service's timeout.
  affrec4: 'type ipv4_addr . inet_proto . inet_service : verdict',
  affrecnp4: 'type inet_proto . inet_service : verdict',
} as const;

/** Sets of endpoint . endpoint pairs: a DNATed packet whose source is its own endpoint is hairpin traffic (masqueraded). */
export const DYNAMIC_SETS = {
  hairpin4: 'type ipv4_addr . ipv4_addr',
  hairpin6: 'type ipv6_addr . ipv6_addr',
} as const;

/** Named sets/maps that are always there. */
export type FixedMapName = keyof typeof DYNAMIC_MAPS | keyof typeof DYNAMIC_SETS;

/** A chain made as Services need it (an affinity timeout's recorder): its rules in nft syntax, the first carrying `comment` (a digest of the rules). */
export interface ChainContent {
  comment: string;
  rules: string[];
}

/** The shared ClientIP affinity map: client . Service address . protocol . port -> endpoint, added by the packet path with the Service's timeout. */
export const AFFINITY_MAP = 'aff4';

/** One affinity key of a unit (`<address> . <proto> . <port>`, or `<proto> . <nodePort>`) in the shared affinity map. */
export interface AffinityMap {
  family: 4 | 6;
  timeoutSeconds: number;
  /** Endpoints (addr . port) its clients may stay pinned to; the diff deletes client elements pointing elsewhere. */
  endpoints: Set<string>;
}

/** A unit's endpoint map (numgen slot -> endpoint): which endpoints it holds, not in which slots (slots.ts assigns them against the kernel's). */
export interface EndpointMap {
  family: 4 | 6;
  proto: 'tcp' | 'udp';
  /** Slot capacity (a power of two, fixed in the choosing rules; the map holds slots 0..endpoints-1). */
  capacity: number;
  /** Endpoints as `addr . port`, sorted. */
  endpoints: string[];
  /** The slot assignment once applied (set by the proxy from the plan; the next diff starts from it). */
  slots?: Map<number, string>;
  /** The unit key it belongs to (doctor names it). */
  unit?: string;
}

/** The Service table's changing content. */
export interface SvcContent {
  chains: Map<string, ChainContent>;
  elements: Map<FixedMapName, Map<string, string>>;
  /** Affinity keys (see AffinityMap) -> what their clients may be pinned to. */
  affinity: Map<string, AffinityMap>;
  /** A unit's slots in a shared endpoint map, by slots name (`ep4t/<address> . <port>`, slots.ts). */
  epMaps: Map<string, EndpointMap>;
}

/** An empty content (every fixed map present, no elements). */
export function emptyContent(): SvcContent {
  const elements = new Map<FixedMapName, Map<string, string>>();
  for (const n of [...Object.keys(DYNAMIC_MAPS), ...Object.keys(DYNAMIC_SETS)] as FixedMapName[]) elements.set(n, new Map());
  return { chains: new Map(), elements, affinity: new Map(), epMaps: new Map() };
}

/** What the kernel holds of one affinity key: its client elements (full element key -> endpoint). */
export interface KernelAffinity {
  clients: Map<string, string>;
}

/** What a listing of the table gives back. */
export interface KernelContent {
  /** Unit chains by name -> the first rule's comment (or '' when the chain is empty). */
  chains: Map<string, string>;
  elements: Map<FixedMapName, Map<string, string>>;
  /** The shared affinity map's elements grouped by affinity key (`<address> . <proto> . <port>`). */
  affinity: Map<string, KernelAffinity>;
  /** Slots by slots name: slot -> `addr . port`. */
  epMaps: Map<string, ReadonlyMap<number, string>>;
  /** Every chain name in the table, fixed ones included. */
  allChains: Set<string>;
}

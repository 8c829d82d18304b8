// What the Service proxy keeps of each Service and EndpointSlice in the shared watch cache (weftd's
// netns): only the fields the model reads (model.ts, endpoints.ts), copied on arrival, so the API's
// uid, timestamps, other labels, owner references, target refs, zones and hints never stay in
// memory (about half of each object at 10,000 Services). Pure.
import type { KubeObject } from './informer.ts';
import { SERVICE_NAME_LABEL, type EndpointSlice, type Service, type ServicePortSpec, type SliceEndpoint } from './types.ts';

type Cond = NonNullable<SliceEndpoint['conditions']>;
type Tri = boolean | null | undefined;

/** One conditions object per (ready, serving, terminating): 10 endpoints x 10,000 Services share 27 objects at most. */
const CONDS = new Map<string, Readonly<Cond>>();

function cond(c: Cond | undefined): Cond {
  const tri = (v: Tri) => (v === undefined ? 'u' : v === null ? 'n' : v ? 't' : 'f');
  const k = `${tri(c?.ready)}${tri(c?.serving)}${tri(c?.terminating)}`;
  let got = CONDS.get(k);
  if (got === undefined) {
    const out: Cond = {};
    if (c?.ready !== undefined) out.ready = c.ready;
    if (c?.serving !== undefined) out.serving = c.serving;
    if (c?.terminating !== undefined) out.terminating = c.terminating;
    CONDS.set(k, (got = Object.freeze(out)));
  }
  return got as Cond;
}

/** `o` with only the keys listed whose value is defined. */
function pick<T extends object, K extends keyof T>(o: T | undefined, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  if (o !== undefined) for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

/** Shared copies of values many objects repeat (namespaces, enumerations, port lists); bounded, so unusual values are kept as they come. */
const SHARED = new Map<string, unknown>();
const SHARED_MAX = 4096;

function shared<T>(key: string, v: T): T {
  const got = SHARED.get(key);
  if (got !== undefined) return got as T;
  if (SHARED.size < SHARED_MAX) SHARED.set(key, v);
  return v;
}

const str = (s: string): string => shared(`s${s}`, s);

function meta(o: KubeObject, labels?: Record<string, string>): KubeObject['metadata'] {
  const m = o.metadata;
  const out: KubeObject['metadata'] = { name: m.name };
  if (m.namespace !== undefined) out.namespace = str(m.namespace);
  if (m.resourceVersion !== undefined) out.resourceVersion = m.resourceVersion;
  if (labels !== undefined) out.labels = labels;
  return out;
}

const SPEC_KEYS = ['type', 'clusterIP', 'clusterIPs', 'externalIPs', 'sessionAffinity', 'sessionAffinityConfig', 'externalTrafficPolicy', 'internalTrafficPolicy', 'healthCheckNodePort', 'ipFamilies'] as const;
const ENUM_KEYS = ['type', 'sessionAffinity', 'externalTrafficPolicy', 'internalTrafficPolicy'] as const;
const PORT_KEYS: ReadonlyArray<keyof ServicePortSpec> = ['name', 'protocol', 'port', 'nodePort'];

/** A frozen list shared by every object with the same one (ports, IP families: ~300 bytes a Service). */
function sharedList<T>(list: T[]): T[] {
  return shared(`l${JSON.stringify(list)}`, Object.freeze(list.map((x) => (typeof x === 'object' && x !== null ? Object.freeze(x) : x))) as T[]);
}

/** The Service as the model reads it; repeated values shared (SHARED), `clusterIP` left out when `clusterIPs` starts with it (the model reads `clusterIPs` first). */
export function slimService(s: Service): Service {
  const out: Service = { metadata: meta(s) };
  const from = s.spec;
  if (from !== undefined) {
    // Built key by key, never deleted from: an object a key is deleted from becomes a slower, larger dictionary.
    const spec: Record<string, unknown> = {};
    for (const k of SPEC_KEYS) {
      const v = from[k];
      if (v === undefined || (k === 'clusterIP' && from.clusterIPs?.[0] === v)) continue;
      spec[k] = (ENUM_KEYS as readonly string[]).includes(k) ? str(v as string) : k === 'ipFamilies' ? sharedList(v as string[]) : v;
    }
    if (from.ports !== undefined) spec['ports'] = sharedList(from.ports.map((p) => pick(p, PORT_KEYS) as ServicePortSpec));
    out.spec = spec as NonNullable<Service['spec']>;
  }
  const ingress = s.status?.loadBalancer?.ingress;
  if (ingress !== undefined && ingress.length > 0) out.status = { loadBalancer: { ingress: ingress.map((i) => pick(i, ['ip', 'ipMode'])) } };
  return out;
}

/** The conditions of CONDS in order of first use: a packed endpoint names its conditions by index. */
const COND_LIST: Cond[] = [];
const COND_INDEX = new Map<Cond, number>();

function condIndex(c: Cond): number {
  let i = COND_INDEX.get(c);
  if (i === undefined) {
    i = COND_LIST.push(c) - 1;
    COND_INDEX.set(c, i);
  }
  return i;
}

/** Node names by index (`#<index>` in a packed endpoint): a cluster has few, each repeated on every endpoint of its pods. Bounded: past it, names stay written out. */
const NODE_LIST: string[] = [];
const NODE_INDEX = new Map<string, number>();
const NODES_MAX = 65_536;

function nodeRef(name: string | undefined): string {
  if (name === undefined) return '\t';
  let i = NODE_INDEX.get(name);
  if (i === undefined) {
    if (NODE_LIST.length >= NODES_MAX) return name;
    i = NODE_LIST.push(name) - 1;
    NODE_INDEX.set(name, i);
  }
  return `#${i}`;
}

/**
 * An EndpointSlice whose endpoints are kept as one string (`address,conditions,node` per endpoint,
 * conditions and node by index,
 * space-separated) and decoded on each read of `endpoints`: one endpoint costs its characters
 * instead of an object, an addresses array and two strings (~100 bytes: ~10 MiB at 10,000 Services
 * x 10 endpoints). The model reads a slice's endpoints once per Service port it renders.
 */
class PackedSlice implements EndpointSlice {
  metadata!: EndpointSlice['metadata'];
  declare addressType?: string;
  declare ports?: NonNullable<EndpointSlice['ports']>;
  private packed: string | null = null;

  static of(s: EndpointSlice, metadata: EndpointSlice['metadata']): PackedSlice {
    const out = new PackedSlice();
    out.metadata = metadata;
    if (s.addressType !== undefined) out.addressType = str(s.addressType);
    if (s.endpoints != null) {
      // Addresses and node names hold no ',', ' ' or '#' (IPs, DNS subdomains).
      out.packed = s.endpoints.map((e) => `${e.addresses[0] ?? ''},${condIndex(cond(e.conditions ?? undefined))},${nodeRef(e.nodeName)}`).join(' ');
    }
    if (s.ports != null) out.ports = sharedList(s.ports.map((p) => pick(p, ['name', 'protocol', 'port'])));
    return out;
  }

  get endpoints(): SliceEndpoint[] | null {
    if (this.packed === null) return null;
    if (this.packed === '') return [];
    return this.packed.split(' ').map((x) => {
      const [ip = '', c = '0', node = '\t'] = x.split(',');
      const nodeName = node === '\t' ? undefined : node.startsWith('#') ? NODE_LIST[Number(node.slice(1))] : node;
      return { addresses: ip === '' ? [] : [ip], conditions: COND_LIST[Number(c)] as Cond, ...(nodeName !== undefined ? { nodeName } : {}) };
    });
  }
}

/** The EndpointSlice as the model reads it: its Service's label, and per endpoint its first address, conditions and node (packed: PackedSlice). */
export function slimSlice(s: EndpointSlice): EndpointSlice {
  const svc = s.metadata.labels?.[SERVICE_NAME_LABEL];
  return PackedSlice.of(s, meta(s, svc !== undefined ? { [SERVICE_NAME_LABEL]: svc } : undefined));
}

/** The watch cache projection of the proxy's Service informer. */
export const SLIM_SERVICE = { name: 'services-proxy', fn: (o: KubeObject): KubeObject => slimService(o as Service) };
/** The watch cache projection of the proxy's EndpointSlice informer. */
export const SLIM_SLICE = { name: 'services-proxy', fn: (o: KubeObject): KubeObject => slimSlice(o as EndpointSlice) };

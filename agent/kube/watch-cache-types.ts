// The shapes the shared kube watch cache hands to weftd's controllers (pure types and one helper;
// no I/O). See watch-cache.ts.

/** The metadata every controller reads. */
export interface KubeMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
  generation?: number;
}

/** Any API object. */
export interface KubeObject {
  metadata: KubeMeta;
}

/** What to list and watch: a collection path and optional selectors. Informers are shared by (path, selectors). */
export interface ResourceSpec {
  /** e.g. '/api/v1/nodes', '/api/v1/pods', '/apis/discovery.k8s.io/v1/endpointslices'. */
  path: string;
  fieldSelector?: string;
  labelSelector?: string;
  /** What to keep of each object on arrival (after managedFields are dropped); informers with different projections are apart. */
  project?: { name: string; fn: (o: KubeObject) => KubeObject };
}

/** A change of the cache, in API order; 'synced' follows the first list and every re-list. */
export type CacheEvent<T> =
  | { type: 'added'; obj: T }
  | { type: 'modified'; obj: T; old: T }
  | { type: 'deleted'; obj: T }
  | { type: 'synced' };

/** One collection in memory, shared by the controllers that read it. */
export interface Informer<T extends KubeObject> {
  /** Resolves once the first list is in the cache. */
  readonly synced: Promise<void>;
  /** The current objects. */
  list(): T[];
  /** key: 'namespace/name', or 'name' for cluster-scoped objects. */
  get(key: string): T | undefined;
  /** Events from now on, delivered synchronously; returns the unsubscribe. */
  subscribe(fn: (ev: CacheEvent<T>) => void): () => void;
}

/** The cache key of an object: 'namespace/name', or 'name' when cluster-scoped. */
export function objectKey(o: KubeObject): string {
  const ns = o.metadata.namespace;
  return ns !== undefined && ns !== '' ? `${ns}/${o.metadata.name}` : o.metadata.name;
}

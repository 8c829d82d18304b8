// The slice of the shared kube watch cache (agent/kube/watch-cache.ts) the Service proxy uses, so that
// unit tests can hand it a fake. Mirrors the cache's interface; no code.
/** Object metadata as the cache stores it. */
export interface KubeMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
}

/** Any API object. */
export interface KubeObject {
  metadata: KubeMeta;
}

/** An event of the cache. */
export type CacheEvent<T> =
  | { type: 'added'; obj: T }
  | { type: 'modified'; obj: T; old: T }
  | { type: 'deleted'; obj: T }
  | { type: 'synced' };

/** One resource's shared informer. */
export interface Informer<T extends KubeObject> {
  readonly synced: Promise<void>;
  list(): T[];
  get(key: string): T | undefined;
  subscribe(fn: (ev: CacheEvent<T>) => void): () => void;
}

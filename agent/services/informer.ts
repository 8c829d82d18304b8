// The shared kube watch cache's types, as the Service proxy reads them (unit tests hand it fakes).
export type { CacheEvent, Informer, KubeMeta, KubeObject } from '../kube/watch-cache-types.ts';

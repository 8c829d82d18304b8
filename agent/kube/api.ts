// One Kubernetes API server as weftd's controllers share it (runs in weftd's netns): the HTTPS
// client and the watch cache over it, so that the subnet manager, the Services proxy and
// NetworkPolicy read Nodes (and the rest) through one informer per collection.
import { KubeClient } from './client.ts';
import type { KubeConn } from './config.ts';
import { WatchCache, type WatchCacheOptions } from './watch-cache.ts';

/** A client and its shared watch cache. */
export interface KubeApi {
  readonly client: KubeClient;
  readonly cache: WatchCache;
  /** Stops every informer and closes the client's connections. */
  close(): void;
}

/** Opens the client and an empty cache (informers start when first asked for). */
export function openKubeApi(conn: KubeConn, o: WatchCacheOptions): KubeApi {
  const client = new KubeClient(conn);
  const cache = new WatchCache(client, o);
  return { client, cache, close: () => { cache.stop(); client.close(); } };
}

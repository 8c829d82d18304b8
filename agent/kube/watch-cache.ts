// weftd's one view of the Kubernetes API (runs in weftd's netns): an informer per collection
// (informer.ts: paged list, watch with bookmarks, resume, re-list on 410 or a dead connection),
// shared by every controller that asks for the same collection, so that the subnet manager, the
// Services proxy and NetworkPolicy add controllers, not clients or watches.
import type { AgentLog } from '../log.ts';
import type { KubeClient } from './client.ts';
import { ResourceInformer } from './informer.ts';
import type { Informer, KubeObject, ResourceSpec } from './watch-cache-types.ts';

export type { CacheEvent, Informer, KubeMeta, KubeObject, ResourceSpec } from './watch-cache-types.ts';
export { objectKey } from './watch-cache-types.ts';

/** How the cache reports and paces itself. */
export interface WatchCacheOptions {
  log: AgentLog;
  /** Called with each list/watch failure (already retried by the cache); default: a warning in the log. */
  onError?: (resource: string, e: Error) => void;
  /** A watch silent this long is restarted; kube-apiserver sends a bookmark about once a minute. Default 150 s. */
  idleMs?: number;
  /** Longest wait between retries while the API server is unreachable; default 5 s. */
  maxBackoffMs?: number;
  /**
   * Items per list page; default 100 (client-go's reflector asks 500): a page's text and parsed
   * objects are garbage once slimmed, and at 10,000 Services 100 a page took RSS after the lists
   * 93.9 -> 87.0 MiB for no more CPU (scripts/bench/services-memory-weftd.ts).
   */
  pageSize?: number;
}

/** The shared informers of one API server (see the module comment). */
export class WatchCache {
  private readonly informers = new Map<string, ResourceInformer<KubeObject>>();
  private stopped = false;

  constructor(private readonly client: KubeClient, private readonly o: WatchCacheOptions) {}

  /** The informer of spec, started on first use; the same spec returns the same informer. */
  informer<T extends KubeObject>(spec: ResourceSpec): Informer<T> {
    if (this.stopped) throw new Error('watch cache is stopped');
    const id = `${spec.path}?f=${spec.fieldSelector ?? ''}&l=${spec.labelSelector ?? ''}&p=${spec.project?.name ?? ''}`;
    let inf = this.informers.get(id);
    if (inf === undefined) {
      inf = new ResourceInformer<KubeObject>(this.client, spec, {
        onError: (e) => { if (this.o.onError !== undefined) this.o.onError(spec.path, e); else this.o.log.warn('kube watch cache', { resource: spec.path, error: e }); },
        idleMs: this.o.idleMs ?? 150_000,
        maxBackoffMs: this.o.maxBackoffMs ?? 5000,
        pageSize: this.o.pageSize ?? 100,
      });
      this.informers.set(id, inf);
      inf.start();
    }
    return inf as unknown as Informer<T>;
  }

  /** Ends every watch; the client is the caller's to close. */
  stop(): void {
    this.stopped = true;
    for (const inf of this.informers.values()) inf.stop();
    this.informers.clear();
  }
}

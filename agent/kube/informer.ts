// One Kubernetes collection kept in memory (runs in weftd's netns, talks to the API server): a
// paged list, then a watch from the list's resourceVersion with bookmarks. The server ending the
// watch resumes it from the last version seen; 410 Gone (the version left the server's watch
// window), a broken connection or one silent for idleMs re-lists and delivers the difference as
// events. No polling. Shared by every controller of weftd through WatchCache (watch-cache.ts).
import type { KubeClient } from './client.ts';
import type { CacheEvent, Informer, KubeObject, ResourceSpec } from './watch-cache-types.ts';
import { objectKey } from './watch-cache-types.ts';
import { paceYoungGeneration } from '../memory.ts';

/** How the informer reports and paces itself. */
export interface InformerOptions {
  onError: (e: Error) => void;
  idleMs: number;
  maxBackoffMs: number;
  /** Items per list page (limit/continue). */
  pageSize: number;
}

interface ListPage<T> {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: T[];
}

interface WatchEvent<T> {
  type?: string;
  object?: T & { code?: number; message?: string };
}

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** Drops what no controller reads and costs the most memory: managedFields and kubectl's copy of the object. */
function trim<T extends KubeObject>(o: T): T {
  const m = o.metadata as KubeObject['metadata'] & { managedFields?: unknown };
  if (m === undefined) return o;
  delete m.managedFields;
  if (m.annotations !== undefined && LAST_APPLIED in m.annotations) delete m.annotations[LAST_APPLIED];
  return o;
}

/** The list-then-watch loop of one ResourceSpec (see the module comment). */
export class ResourceInformer<T extends KubeObject> implements Informer<T> {
  readonly synced: Promise<void>;
  private readonly objects = new Map<string, T>();
  private readonly subscribers = new Set<(ev: CacheEvent<T>) => void>();
  private resolveSynced!: () => void;
  private rv = '';
  private current: { abort(): void } | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private backoffMs = 0;
  private stopped = false;

  private readonly keep: (o: T) => T;

  constructor(private readonly client: KubeClient, private readonly spec: ResourceSpec, private readonly o: InformerOptions) {
    this.synced = new Promise((resolve) => { this.resolveSynced = resolve; });
    const project = spec.project?.fn;
    this.keep = project === undefined ? trim : (x) => project(trim(x)) as T;
  }

  list(): T[] {
    return [...this.objects.values()];
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  subscribe(fn: (ev: CacheEvent<T>) => void): () => void {
    this.subscribers.add(fn);
    return () => { this.subscribers.delete(fn); };
  }

  /** Starts the first list (retried with back-off until it succeeds or stop()). */
  start(): void {
    this.retry(0);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.current?.abort();
    this.subscribers.clear();
  }

  private emit(ev: CacheEvent<T>): void {
    for (const fn of this.subscribers) {
      try {
        fn(ev);
      } catch (e) {
        this.o.onError(new Error(`${this.spec.path}: a subscriber failed on a ${ev.type} event: ${(e as Error).message}`, { cause: e }));
      }
    }
  }

  private query(extra: Record<string, string>): string {
    const q = new URLSearchParams(extra);
    if (this.spec.fieldSelector !== undefined) q.set('fieldSelector', this.spec.fieldSelector);
    if (this.spec.labelSelector !== undefined) q.set('labelSelector', this.spec.labelSelector);
    return `${this.spec.path}?${q.toString()}`;
  }

  /** Lists every page, then replaces the cache, emitting the difference and 'synced'. */
  private async relist(): Promise<void> {
    const fresh = new Map<string, T>();
    let cont = '';
    let rv = '';
    do {
      const page = await this.client.call('GET', this.query({ limit: String(this.o.pageSize), ...(cont ? { continue: cont } : {}) })) as ListPage<T>;
      for (const item of page.items ?? []) fresh.set(objectKey(item), this.keep(item));
      cont = page.metadata?.continue ?? '';
      rv = page.metadata?.resourceVersion ?? rv;
      paceYoungGeneration();
    } while (cont !== '' && !this.stopped);
    if (this.stopped) return;
    for (const [k, old] of this.objects) {
      if (!fresh.has(k)) {
        this.objects.delete(k);
        this.emit({ type: 'deleted', obj: old });
      }
    }
    for (const [k, obj] of fresh) {
      const old = this.objects.get(k);
      this.objects.set(k, obj);
      if (old === undefined) this.emit({ type: 'added', obj });
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.emit({ type: 'modified', obj, old });
    }
    this.rv = rv;
    this.resolveSynced();
    this.emit({ type: 'synced' });
  }

  private startWatch(): void {
    if (this.stopped) return;
    let gone = false;
    const w = this.client.watch(this.query({ watch: 'true', allowWatchBookmarks: 'true', resourceVersion: this.rv }), (raw) => {
      const ev = raw as WatchEvent<T>;
      if (ev.type === 'ERROR') {
        gone = ev.object?.code === 410;
        if (!gone) this.o.onError(new Error(`${this.spec.path}: watch error: ${ev.object?.message ?? JSON.stringify(ev.object)}`));
        w.abort();
        return;
      }
      this.backoffMs = 0;
      this.onWatchEvent(ev);
    }, this.o.idleMs);
    this.current = w;
    void w.done.then((end) => {
      if (this.stopped || this.current !== w) return;
      if (gone || end.error !== undefined) {
        if (end.error !== undefined && !gone) this.o.onError(new Error(`${this.spec.path}: watch broken, re-listing: ${end.error.message}`, { cause: end.error }));
        this.retry(this.nextBackoff());
      } else {
        this.startWatch(); // the server's request timeout: resume from the last resourceVersion
      }
    });
  }

  private onWatchEvent(ev: WatchEvent<T>): void {
    const obj = ev.object;
    const rv = obj?.metadata?.resourceVersion;
    if (rv !== undefined && rv !== '') this.rv = rv;
    if (obj === undefined || ev.type === 'BOOKMARK' || obj.metadata?.name === undefined) return;
    const key = objectKey(obj);
    const old = this.objects.get(key);
    if (ev.type === 'DELETED') {
      this.objects.delete(key);
      this.emit({ type: 'deleted', obj: this.keep(obj) });
      return;
    }
    const fresh = this.keep(obj);
    this.objects.set(key, fresh);
    this.emit(old === undefined ? { type: 'added', obj: fresh } : { type: 'modified', obj: fresh, old });
  }

  private nextBackoff(): number {
    const d = this.backoffMs;
    this.backoffMs = Math.min(Math.max(this.backoffMs * 2, 100), this.o.maxBackoffMs);
    return d;
  }

  /** Re-lists after delayMs, then watches; a failed list waits longer each time. */
  private retry(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.relist().then(() => this.startWatch(), (e: unknown) => {
        this.o.onError(new Error(`${this.spec.path}: list failed: ${(e as Error).message}`, { cause: e }));
        this.retry(this.nextBackoff());
      });
    }, delayMs);
  }
}

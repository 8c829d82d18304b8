// Fake Service/EndpointSlice informers for the services benchmark: the proxy under test gets its
// objects in memory, so the figures are render + diff + nft, not API server load.
import type { CacheEvent, Informer, KubeObject } from '../../agent/services/informer.ts';

/** An in-memory informer whose events the benchmark emits. */
export class FakeInformer<T extends KubeObject> implements Informer<T> {
  readonly synced = Promise.resolve();
  private readonly objs = new Map<string, T>();
  private readonly subs: Array<(ev: CacheEvent<T>) => void> = [];

  constructor(objs: T[]) {
    for (const o of objs) this.objs.set(`${o.metadata.namespace ?? ''}/${o.metadata.name}`, o);
  }

  list(): T[] {
    return [...this.objs.values()];
  }

  get(key: string): T | undefined {
    return this.objs.get(key);
  }

  subscribe(fn: (ev: CacheEvent<T>) => void): () => void {
    this.subs.push(fn);
    return () => { this.subs.splice(this.subs.indexOf(fn), 1); };
  }

  /** Replaces an object and tells the subscribers. */
  modify(obj: T): void {
    const k = `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
    const old = this.objs.get(k);
    this.objs.set(k, obj);
    for (const s of this.subs) s(old === undefined ? { type: 'added', obj } : { type: 'modified', obj, old });
  }
}

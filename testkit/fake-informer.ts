// An in-memory informer (the watch cache's interface) for the Service proxy's namespace tests and
// benchmark: objects are handed over directly, so what is measured is render + diff + nft, not an API server.
import type { CacheEvent, Informer, KubeObject } from '../agent/services/informer.ts';

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

  /** Removes an object and tells the subscribers. */
  remove(key: string): void {
    const obj = this.objs.get(key);
    if (obj === undefined) return;
    this.objs.delete(key);
    for (const s of this.subs) s({ type: 'deleted', obj });
  }

  /** Replaces an object and tells the subscribers. */
  modify(obj: T): void {
    const k = `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
    const old = this.objs.get(k);
    this.objs.set(k, obj);
    for (const s of this.subs) s(old === undefined ? { type: 'added', obj } : { type: 'modified', obj, old });
  }
}

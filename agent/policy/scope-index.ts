// Membership indexes of the incremental policy model (pure): for each scope (a namespace or namespace
// selector, then a pod selector) the policies use, the pods in it, kept current pod by pod and
// namespace by namespace, so that an event matches the changed object against the scopes and nothing
// else. Scopes whose pods or their addresses or ports changed are marked dirty for the next pass.
import { scopeKey, type Scope } from './compile.ts';
import { matchesSelector } from './selector.ts';
import type { PodInfo } from './types.ts';

interface Entry {
  scope: Scope;
  refs: number;
  members: Map<string, PodInfo>;
  list: PodInfo[] | undefined;
}

/** Pods and namespaces of the cluster with the pods of every scope in use. */
export class ScopeIndex {
  private readonly entries = new Map<string, Entry>();
  private readonly pods = new Map<string, PodInfo>();
  private readonly byNs = new Map<string, Map<string, PodInfo>>();
  private readonly namespaces = new Map<string, Record<string, string>>();
  private dirty = new Set<string>();

  /** Every pod, in arrival order. */
  allPods(): IterableIterator<PodInfo> {
    return this.pods.values();
  }

  /** The namespaces' labels, as the full recompute reads them. */
  namespaceLabels(): ReadonlyMap<string, Record<string, string>> {
    return this.namespaces;
  }

  /** The pod under `key` (namespace/name), if known. */
  pod(key: string): PodInfo | undefined {
    return this.pods.get(key);
  }

  /** Starts (or counts one more use of) a scope; a new scope is matched against every pod once. */
  ref(s: Scope): string {
    const k = scopeKey(s);
    const e = this.entries.get(k);
    if (e !== undefined) {
      e.refs++;
      return k;
    }
    this.entries.set(k, { scope: s, refs: 1, members: this.match(s), list: undefined });
    // Its sets may be cached from before it was dropped: fill them again.
    this.dirty.add(k);
    return k;
  }

  /** The pods of scope `s` matched afresh against every pod (a new scope; the model check). */
  match(s: Scope): Map<string, PodInfo> {
    const members = new Map<string, PodInfo>();
    for (const [ns, pods] of this.byNs) {
      if (!this.nsIn(s, ns)) continue;
      for (const [pk, p] of pods) if (s.podSel === undefined || matchesSelector(s.podSel, p.labels)) members.set(pk, p);
    }
    return members;
  }

  /** The scopes in use with their indexed pods (the model check compares them with match()). */
  *scopes(): IterableIterator<{ key: string; scope: Scope; members: ReadonlyMap<string, PodInfo> }> {
    for (const [key, e] of this.entries) yield { key, scope: e.scope, members: e.members };
  }

  /** Ends one use of a scope; the last one drops its index. */
  unref(k: string): void {
    const e = this.entries.get(k);
    if (e === undefined) return;
    if (--e.refs <= 0) this.entries.delete(k);
  }

  /** The pods of a scope in use (of the whole cluster when it is not in use: the caller's bug, answered empty). */
  members(s: Scope): readonly PodInfo[] {
    const e = this.entries.get(scopeKey(s));
    if (e === undefined) return [];
    e.list ??= [...e.members.values()];
    return e.list;
  }

  /** Adds or replaces a pod: it is matched against each scope in use. */
  putPod(key: string, p: PodInfo): void {
    const old = this.pods.get(key);
    this.pods.set(key, p);
    let ns = this.byNs.get(p.namespace);
    if (ns === undefined) this.byNs.set(p.namespace, (ns = new Map()));
    ns.set(key, p);
    const same = old !== undefined && JSON.stringify([old.ips, old.ports, old.hostIP]) === JSON.stringify([p.ips, p.ports, p.hostIP]);
    for (const [k, e] of this.entries) {
      const was = e.members.has(key);
      const now = this.nsIn(e.scope, p.namespace) && (e.scope.podSel === undefined || matchesSelector(e.scope.podSel, p.labels));
      if (now) e.members.set(key, p);
      else if (was) e.members.delete(key);
      if (was !== now || (now && !same)) this.touch(k, e);
      else if (now) e.list = undefined;
    }
  }

  /** Removes a pod from every scope; false when it was not known. */
  deletePod(key: string): boolean {
    const p = this.pods.get(key);
    if (p === undefined) return false;
    this.pods.delete(key);
    this.byNs.get(p.namespace)?.delete(key);
    for (const [k, e] of this.entries) if (e.members.delete(key)) this.touch(k, e);
    return true;
  }

  /**
   * Sets (or, with undefined, removes) a namespace's labels: the pods in it join or leave the
   * namespace-selector scopes. Returns whether the namespace was known before.
   */
  putNamespace(name: string, labels: Record<string, string> | undefined): boolean {
    const known = this.namespaces.has(name);
    const before = new Map([...this.entries].filter(([, e]) => e.scope.ns === undefined).map(([k, e]) => [k, this.nsIn(e.scope, name)]));
    if (labels === undefined) this.namespaces.delete(name);
    else this.namespaces.set(name, labels);
    for (const [k, was] of before) {
      const e = this.entries.get(k);
      if (e === undefined || this.nsIn(e.scope, name) === was) continue;
      for (const [pk, p] of this.byNs.get(name) ?? []) {
        if (was) e.members.delete(pk);
        else if (e.scope.podSel === undefined || matchesSelector(e.scope.podSel, p.labels)) e.members.set(pk, p);
      }
      this.touch(k, e);
    }
    return known;
  }

  /** The scopes changed since the last call (their sets must be filled again). */
  takeDirty(): Set<string> {
    const d = this.dirty;
    this.dirty = new Set();
    return d;
  }

  private touch(k: string, e: Entry): void {
    e.list = undefined;
    this.dirty.add(k);
  }

  private nsIn(s: Scope, ns: string): boolean {
    if (s.ns !== undefined) return s.ns === ns;
    return matchesSelector(s.nsSel ?? {}, this.namespaces.get(ns) ?? { 'kubernetes.io/metadata.name': ns });
  }
}

// The incremental policy model (pure): the cluster's pods, namespaces and policies with per-scope
// membership indexes (scope-index.ts), so that a Pod, Namespace or NetworkPolicy event matches only
// the changed object (a pod against each scope; a namespace's pods against the namespace-selector
// scopes; a policy's new scopes against the pods), and a pass fills again only the sets of scopes that
// changed. Its table is the full recompute's (desiredPolicy without a membership source), which stays
// the cold path and the periodic check.
import type { TableSet } from '../../lib/netfilter/table-diff.ts';
import { compilePolicy, scopeKey, type Scope, type SetRequest } from './compile.ts';
import { desiredPolicy, type DesiredPolicy, type MembershipSource, type PolicyCompileCache, type PolicyWorld } from './desired.ts';
import { ScopeIndex } from './scope-index.ts';
import type { PodInfo, Policy } from './types.ts';

/** The scopes a policy reads pods from: its own pods and its peers'. */
function scopesOf(pol: Policy): Scope[] {
  const cp = compilePolicy(pol, [4]);
  const out = new Map<string, Scope>([[scopeKey(cp.target), cp.target]]);
  for (const r of cp.requests.values()) if (r.kind !== 'block') out.set(scopeKey(r.scope), r.scope);
  return [...out.values()];
}

/** The model weftd keeps between passes (one per controller). */
export class IncrementalPolicy {
  private readonly index = new ScopeIndex();
  private readonly policies = new Map<string, { pol: Policy; scopes: string[] }>();
  private readonly sets = new Map<string, { set: TableSet; scope: string | undefined }>();

  /** A pod added or changed (`key` namespace/name). */
  putPod(key: string, p: PodInfo): void {
    this.index.putPod(key, p);
  }

  /** A pod gone; false when it was not known. */
  deletePod(key: string): boolean {
    return this.index.deletePod(key);
  }

  /** The pod under `key`, as last put. */
  pod(key: string): PodInfo | undefined {
    return this.index.pod(key);
  }

  /** A namespace's labels (kubernetes.io/metadata.name included); undefined when it is gone. Returns whether it was known. */
  putNamespace(name: string, labels: Record<string, string> | undefined): boolean {
    return this.index.putNamespace(name, labels);
  }

  /** A namespace's labels as last put. */
  namespace(name: string): Record<string, string> | undefined {
    return this.index.namespaceLabels().get(name);
  }

  /** How many policies the model holds. */
  get policyCount(): number {
    return this.policies.size;
  }

  /** A policy added or changed (`key` namespace/name): its scopes are indexed before the old ones are let go (shared ones stay). */
  putPolicy(key: string, pol: Policy): void {
    const scopes = scopesOf(pol).map((s) => this.index.ref(s));
    this.deletePolicy(key);
    this.policies.set(key, { pol, scopes });
  }

  /** A policy gone; false when it was not known. */
  deletePolicy(key: string): boolean {
    const old = this.policies.get(key);
    if (old === undefined) return false;
    this.policies.delete(key);
    for (const k of old.scopes) this.index.unref(k);
    return true;
  }

  /** The scopes in use with their indexed pods (model-check.ts). */
  scopes(): IterableIterator<{ key: string; scope: Scope; members: ReadonlyMap<string, PodInfo> }> {
    return this.index.scopes();
  }

  /** The pods of a scope matched afresh against every pod (model-check.ts). */
  match(s: Scope): Map<string, PodInfo> {
    return this.index.match(s);
  }

  /** The cluster as the full recompute reads it. */
  world(nodeAddrs: readonly string[], isLocal: (p: PodInfo) => boolean): PolicyWorld {
    return { policies: [...this.policies.values()].map((x) => x.pol), pods: [...this.index.allPods()], namespaces: this.index.namespaceLabels(), isLocal, nodeAddrs };
  }

  /** The desired table from the indexes: only the sets of scopes changed since the last call are filled again. */
  desired(nodeAddrs: readonly string[], isLocal: (p: PodInfo) => boolean, cache: PolicyCompileCache): DesiredPolicy {
    const dirty = this.index.takeDirty();
    for (const [name, s] of this.sets) if (s.scope !== undefined && dirty.has(s.scope)) this.sets.delete(name);
    const src: MembershipSource = {
      podsOf: (s) => this.index.members(s),
      cachedSet: (name) => this.sets.get(name)?.set,
      keepSet: (name: string, r: SetRequest, set: TableSet) => { this.sets.set(name, { set, scope: r.kind === 'block' ? undefined : scopeKey(r.scope) }); },
    };
    const d = desiredPolicy(this.world(nodeAddrs, isLocal), cache, src);
    // Sets no policy asks for any more go: a scope dropped and taken up again is filled anew.
    for (const name of this.sets.keys()) if (!d.content.sets.has(name)) this.sets.delete(name);
    return d;
  }

  /** The full recompute of the same cluster (every pod against every scope). */
  full(nodeAddrs: readonly string[], isLocal: (p: PodInfo) => boolean, cache: PolicyCompileCache = new Map()): DesiredPolicy {
    return desiredPolicy(this.world(nodeAddrs, isLocal), cache);
  }
}

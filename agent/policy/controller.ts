// weftd --network-policy (runs in the node's netns): NetworkPolicies, Pods (cluster-wide: peers on
// other nodes matter) and Namespaces from the shared watch cache -> desiredPolicy -> one nft
// transaction of the difference. Each event schedules a pass a few ms later (bursts coalesce), so a
// change is enforced within one model + diff + nft run; a periodic resync re-lists the kernel.
import type { Informer, KubeObject, CacheEvent } from '../kube/watch-cache.ts';
import type { WatchCache } from '../kube/watch-cache.ts';
import type { AgentLog } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import { ReconcileLoop } from '../reconcile/loop.ts';
import type { NftRunOptions } from '../../lib/netfilter/types.ts';
import { TableApplier } from './apply.ts';
import { listCounters } from '../../lib/netfilter/list-counters.ts';
import { desiredPolicy, POLICY_TABLE, type DesiredPolicy, type PolicyCompileCache, type PolicyPlan } from './desired.ts';
import { formatPolicyView, PolicyViewWriter } from './state.ts';
import { definePolicyMetrics, PM, readDropCounters } from './metrics.ts';
import { desiredDigest, IncrementalPolicy } from './incremental.ts';
import { namespaceLabels, trimPod, trimPolicy, type PodInfo } from './types.ts';

/** What the controller needs from weftd. */
export interface PolicyControllerOptions {
  cache: WatchCache;
  log: AgentLog;
  metrics: Metrics;
  /** Sources always accepted (cni0's gateway, the node's addresses); read on every pass (the lease may change). */
  nodeAddrs(): string[];
  /** True for pods of this node (whose traffic this node's rules must judge). */
  isLocal(pod: PodInfo): boolean;
  /** Delay from an event to its pass (default 2 ms). */
  debounceMs?: number;
  /** Kernel re-list period (default 30 s). */
  resyncMs?: number;
  nft?: NftRunOptions;
  /** Where to leave the policy view for `weft doctor` (state.ts); none when absent. */
  viewFile?: string;
}

/** The running controller. */
export class PolicyController {
  private readonly applier: TableApplier;
  private readonly compiled: PolicyCompileCache = new Map();
  private readonly model = new IncrementalPolicy();
  /** The node addresses of the last pass: when they change (a new lease), which pods are local may too. */
  private lastNodeAddrs = '';
  private readonly loop: ReconcileLoop;
  private readonly view: PolicyViewWriter | undefined;
  private readonly unsubscribe: (() => void)[] = [];
  private lastRules = 0;
  private lastPlans: readonly PolicyPlan[] = [];
  private lastError = '';
  /** When the first API event not yet programmed arrived (performance.now()), for the log's eventMs. */
  private eventAt: number | undefined;
  /** ms timestamps of the pass that last made the table current (tests, bench). */
  lastAppliedAt = 0;

  constructor(private readonly o: PolicyControllerOptions) {
    this.applier = new TableApplier(POLICY_TABLE, o.nft ?? {});
    this.view = o.viewFile !== undefined ? new PolicyViewWriter(o.viewFile) : undefined;
    definePolicyMetrics(o.metrics);
    o.metrics.addCollector(() => this.collectDrops());
    this.loop = new ReconcileLoop((why) => this.pass(why), { debounceMs: o.debounceMs ?? 2, periodMs: o.resyncMs ?? 30_000 });
  }

  /** Subscribes, waits for the three first lists, runs the first pass; resolves once enforced. */
  async start(): Promise<void> {
    const c = this.o.cache;
    const pol = c.informer<KubeObject>({ path: '/apis/networking.k8s.io/v1/networkpolicies' });
    const pods = c.informer<KubeObject>({ path: '/api/v1/pods' });
    const nss = c.informer<KubeObject>({ path: '/api/v1/namespaces' });
    this.follow(pol, (o) => this.putPolicy(o), (o) => this.deletePolicy(key(o)));
    this.follow(pods, (o) => this.putPod(o), (o) => this.deletePod(key(o)));
    this.follow(nss, (o) => this.putNamespace(o), (o) => this.model.putNamespace(namespaceLabels(o).name, undefined));
    await Promise.all([pol.synced, pods.synced, nss.synced]);
    for (const o of pol.list()) this.putPolicy(o);
    for (const o of pods.list()) this.putPod(o);
    for (const o of nss.list()) this.putNamespace(o);
    this.pass('start');
    this.loop.start();
  }

  // Each returns whether the event changes anything policy reads; the model is kept in step.
  private putPolicy(o: KubeObject): boolean {
    this.model.putPolicy(key(o), trimPolicy(o));
    return true;
  }

  private deletePolicy(k: string): boolean {
    return this.model.deletePolicy(k);
  }

  private putPod(o: KubeObject): boolean {
    const k = key(o);
    const p = trimPod(o);
    const before = this.model.pod(k);
    if (p === undefined) return this.deletePod(k);
    // Status updates (conditions, restarts) change nothing policy reads: no pass for them.
    if (before !== undefined && JSON.stringify(before) === JSON.stringify(p)) return false;
    this.model.putPod(k, p);
    return true;
  }

  private deletePod(k: string): boolean {
    return this.model.deletePod(k);
  }

  private putNamespace(o: KubeObject): boolean {
    const { name, labels } = namespaceLabels(o);
    const before = this.model.namespace(name);
    if (before !== undefined && JSON.stringify(before) === JSON.stringify(labels)) return false;
    this.model.putNamespace(name, labels);
    return true;
  }

  private follow(inf: Informer<KubeObject>, put: (o: KubeObject) => boolean, del: (o: KubeObject) => boolean): void {
    this.unsubscribe.push(inf.subscribe((ev: CacheEvent<KubeObject>) => {
      if (ev.type === 'synced') return this.loop.trigger('resync');
      const changed = ev.type === 'deleted' ? del(ev.obj) : put(ev.obj);
      if (changed) {
        this.eventAt ??= performance.now();
        this.loop.trigger(ev.type);
      }
    }));
  }

  /** One pass: model, diff against the kernel, one transaction (synchronous). */
  pass(why: string): void {
    const t0 = performance.now();
    const eventAt = this.eventAt;
    this.eventAt = undefined;
    if (why.includes('periodic')) this.applier.invalidate();
    try {
      const d = this.desired(why);
      const r = this.applier.apply(d.content);
      const tApplied = performance.now();
      this.lastRules = d.rules;
      this.lastPlans = d.plans;
      this.lastAppliedAt = Date.now();
      this.lastError = '';
      const m = this.o.metrics;
      m.set(PM.policies, this.model.policyCount);
      m.set(PM.selected, d.isolated.ingress, { direction: 'ingress' });
      m.set(PM.selected, d.isolated.egress, { direction: 'egress' });
      m.set(PM.rules, d.rules);
      m.set(PM.elements, [...d.content.sets.values()].reduce((n, s) => n + s.elements.size, 0));
      m.inc(PM.passes, { result: r.via === 'none' ? 'unchanged' : 'applied' });
      if (r.via !== 'none') m.inc(PM.applies, { via: r.via });
      this.writeView(d);
      if (r.via !== 'none') this.o.log.debug('network policy applied', { trigger: why, via: r.via, ...r.stats, listed: r.listed, ms: Math.round(r.durationMs), modelMs: round1(tApplied - t0 - r.durationMs), ...(eventAt !== undefined ? { eventMs: round1(tApplied - eventAt) } : {}) });
    } catch (e) {
      this.lastError = (e as Error).message;
      this.o.metrics.inc(PM.passes, { result: 'failed' });
      this.o.metrics.inc(PM.errors, { source: 'apply' });
      this.o.log.warn('network policy pass failed', { trigger: why, error: e });
      this.loop.trigger('retry', 1000);
    }
    this.o.metrics.set(PM.applySeconds, (performance.now() - t0) / 1000);
  }

  /**
   * The desired table: from the incremental model on events; the full recompute at start, when the
   * node's addresses changed, and on the periodic pass, where it also checks the model (a difference
   * is logged, counted as errors{source="model"} and the full table is applied).
   */
  private desired(why: string): DesiredPolicy {
    const addrs = this.o.nodeAddrs();
    const addrsKey = addrs.join(',');
    const cold = why === 'start' || addrsKey !== this.lastNodeAddrs;
    this.lastNodeAddrs = addrsKey;
    const periodic = why.includes('periodic');
    const inc = cold ? undefined : this.model.desired(addrs, this.o.isLocal, this.compiled);
    if (inc !== undefined && !periodic) return inc;
    const full = desiredPolicy(this.model.world(addrs, this.o.isLocal), this.compiled);
    if (inc !== undefined && desiredDigest(inc) !== desiredDigest(full)) {
      this.o.metrics.inc(PM.errors, { source: 'model' });
      this.o.log.warn('network policy: the incremental model differs from the full recompute; applying the full one', { trigger: why });
    }
    return full;
  }

  private writeView(d: DesiredPolicy): void {
    try {
      this.view?.write(formatPolicyView(`${POLICY_TABLE.family} ${POLICY_TABLE.name}`, d));
    } catch (e) {
      this.o.metrics.inc(PM.errors, { source: 'view' });
      this.o.log.warn('network policy view not written', { path: this.o.viewFile, error: e });
    }
  }

  private collectDrops(): void {
    try {
      const m = this.o.metrics;
      m.clear(PM.drops);
      for (const d of readDropCounters(listCounters(POLICY_TABLE, this.o.nft ?? {}), this.lastPlans)) m.set(PM.drops, d.packets, { policy: d.policy, direction: d.direction });
    } catch (e) {
      this.o.metrics.inc(PM.errors, { source: 'list' });
      this.o.log.debug('network policy counters', { error: e });
    }
  }

  /** For /healthz: the last pass's state. */
  health(): { ok: boolean; detail: string } {
    return this.lastError === '' ? { ok: true, detail: `${this.model.policyCount} policies, ${this.lastRules} rules` } : { ok: false, detail: `network policy: ${this.lastError}` };
  }

  /** Stops following the API; the table stays (policy stays enforced while weftd restarts). */
  stop(): void {
    this.loop.stop();
    for (const u of this.unsubscribe) u();
  }
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

function key(o: KubeObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

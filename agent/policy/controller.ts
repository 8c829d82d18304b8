// weftd --network-policy (runs in the node's netns): NetworkPolicies, Pods (cluster-wide: peers on
// other nodes matter) and Namespaces from the shared watch cache -> desiredPolicy -> one nft
// transaction of the difference. Each event schedules a pass a few ms later (bursts coalesce), so a
// change is enforced within one model + diff + nft run; a periodic resync re-lists the kernel and
// checks the model, both off the event path (resync.ts).
import type { Informer, KubeObject, CacheEvent } from '../kube/watch-cache.ts';
import type { WatchCache } from '../kube/watch-cache.ts';
import type { AgentLog } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import { ReconcileLoop } from '../reconcile/loop.ts';
import type { NftRunOptions } from '../../lib/netfilter/types.ts';
import { TableApplier } from './apply.ts';
import { desiredPolicy, POLICY_TABLE, type DesiredPolicy, type PolicyCompileCache, type PolicyPlan } from './desired.ts';
import { PolicyViewWriter } from './state.ts';
import { definePolicyMetrics, DropCounterReader, PM, setPassMetrics } from './metrics.ts';
import { IncrementalPolicy } from './incremental.ts';
import { modelCheckSteps, runSliced, type SlicedRun } from './model-check.ts';
import { PolicyResync, RESYNC_TIMING, type CheckResult, type ResyncTiming } from './resync.ts';
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
  /** Kernel re-list and model check period (default 30 s). */
  resyncMs?: number;
  /** When the re-list and the model check run after a periodic pass (resync.ts; tests shorten it). */
  resyncTiming?: ResyncTiming;
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
  /**
   * isLocal per pod object (a changed pod is a new object): a pass asks it thousands of times, and
   * for a pod of another node weftd's answer parses the lease subnet and every address of the pod.
   * Forgotten when the node's addresses change.
   */
  private localMemo = new WeakMap<PodInfo, boolean>();
  private readonly isLocal = (p: PodInfo): boolean => {
    let v = this.localMemo.get(p);
    if (v === undefined) this.localMemo.set(p, (v = this.o.isLocal(p)));
    return v;
  };
  private readonly loop: ReconcileLoop;
  private readonly resync: PolicyResync;
  /** Bumped by every event the model takes (the model check compares only a table of the current model), and when it came. */
  private modelGen = 0;
  private lastEventAt = 0;
  private lastDesired: { d: DesiredPolicy; gen: number; addrs: string } | undefined;
  /** The model check found a difference: the next pass applies the full recompute. */
  private fullNext = false;
  private readonly view: PolicyViewWriter | undefined;
  private readonly drops: DropCounterReader;
  private readonly unsubscribe: (() => void)[] = [];
  private lastRules = 0;
  private lastPlans: readonly PolicyPlan[] = [];
  private lastError = '';
  /** When the first API event not yet programmed arrived (performance.now()), for the log's eventMs. */
  private eventAt: number | undefined;
  /** ms timestamps of the pass that last made the table current (tests, bench). */
  lastAppliedAt = 0;
  /** How each pass got its table: the last one reused (no event since), the incremental model, the full recompute (tests). */
  readonly modelRuns = { reused: 0, incremental: 0, full: 0 };

  constructor(private readonly o: PolicyControllerOptions) {
    this.applier = new TableApplier(POLICY_TABLE, o.nft ?? {});
    const viewError = (error: unknown): void => { o.metrics.inc(PM.errors, { source: 'view' }); o.log.warn('network policy view not written', { path: o.viewFile, error }); };
    this.view = o.viewFile !== undefined ? new PolicyViewWriter(o.viewFile, viewError) : undefined;
    definePolicyMetrics(o.metrics);
    this.drops = new DropCounterReader(POLICY_TABLE, o.nft ?? {}, (error) => {
      o.metrics.inc(PM.errors, { source: 'list' });
      o.log.debug('network policy counters', { error });
    });
    o.metrics.addCollector(() => this.drops.collect(o.metrics, this.lastPlans));
    this.loop = new ReconcileLoop((why) => this.pass(why), { debounceMs: o.debounceMs ?? 2, periodMs: o.resyncMs ?? 30_000 });
    this.resync = new PolicyResync({
      relist: () => this.applier.relist(),
      relisted: (ms) => { o.log.debug('network policy table listed in the background', { ms: round1(ms) }); this.loop.trigger('relisted', 0); },
      fallBack: (why, error) => {
        if (error !== undefined) o.log.warn('network policy: the table could not be listed in the background; listing it in the next pass', { error });
        if (error !== undefined) o.metrics.inc(PM.errors, { source: 'list' });
        this.applier.invalidate();
        this.loop.trigger(`relist-${why}`, 0);
      },
      check: () => this.checkModel(),
      quietFor: () => performance.now() - this.lastEventAt,
    }, o.resyncTiming ?? RESYNC_TIMING);
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
    void this.drops.refresh();
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
        this.modelGen++;
        this.lastEventAt = performance.now();
        this.eventAt ??= this.lastEventAt;
        this.loop.trigger(ev.type);
      }
    }));
  }

  /** One pass: model, diff against the kernel, one transaction (synchronous). */
  pass(why: string): void {
    const t0 = performance.now();
    const eventAt = this.eventAt;
    this.eventAt = undefined;
    if (why.includes('periodic')) this.resync.periodic();
    try {
      const d = this.desired(why);
      const tDesired = performance.now();
      const r = this.applier.apply(d.content);
      const tApplied = performance.now();
      this.lastRules = d.rules;
      this.lastPlans = d.plans;
      this.lastAppliedAt = Date.now();
      this.lastError = '';
      setPassMetrics(this.o.metrics, d, this.model.policyCount, r.via);
      this.view?.writeSoon(`${POLICY_TABLE.family} ${POLICY_TABLE.name}`, d);
      const tEnd = performance.now();
      // Where a pass's time went: waitMs from the first event to the pass's start (the debounce and
      // whatever held the thread), desiredMs the model, listMs a synchronous kernel listing inside the
      // transaction's ms (after a failure), viewMs the metrics and the view's scheduling.
      const times = { waitMs: eventAt !== undefined ? round1(t0 - eventAt) : undefined, desiredMs: round1(tDesired - t0), listMs: round1(r.listMs), viewMs: round1(tEnd - tApplied), totalMs: round1(tEnd - t0) };
      if (r.via !== 'none') this.o.log.debug('network policy applied', { trigger: why, via: r.via, ...r.stats, listed: r.listed, ms: Math.round(r.durationMs), modelMs: round1(tApplied - t0 - r.durationMs), ...(eventAt !== undefined ? { eventMs: round1(tApplied - eventAt) } : {}), ...times });
      else if (tEnd - t0 >= SLOW_PASS_MS || r.listed) this.o.log.debug('network policy pass', { trigger: why, via: r.via, listed: r.listed, ms: Math.round(r.durationMs), ...times });
    } catch (e) {
      this.lastError = (e as Error).message;
      this.o.metrics.inc(PM.passes, { result: 'failed' });
      this.o.metrics.inc(PM.errors, { source: 'apply' });
      this.o.log.warn('network policy pass failed', { trigger: why, error: e });
      this.loop.trigger('retry', 1000);
    }
    this.o.metrics.set(PM.applySeconds, (performance.now() - t0) / 1000);
  }

  /** The desired table: the last one while no event came, else from the incremental model, or in full at start, on new node addresses and after the model check found a difference. */
  private desired(why: string): DesiredPolicy {
    const addrs = this.o.nodeAddrs();
    const addrsKey = addrs.join(',');
    const full = why === 'start' || addrsKey !== this.lastNodeAddrs || this.fullNext;
    if (addrsKey !== this.lastNodeAddrs) this.localMemo = new WeakMap();
    this.lastNodeAddrs = addrsKey;
    this.fullNext = false;
    const gen = this.modelGen;
    // No event since the last pass (a re-list, a retry, the periodic pass): its table is still the model's.
    const last = this.lastDesired;
    if (!full && last !== undefined && last.gen === gen && last.addrs === addrsKey) {
      this.modelRuns.reused++;
      return last.d;
    }
    this.modelRuns[full ? 'full' : 'incremental']++;
    const d = full ? desiredPolicy(this.model.world(addrs, this.isLocal), this.compiled) : this.model.desired(addrs, this.isLocal, this.compiled);
    this.lastDesired = { d, gen, addrs: addrsKey };
    return d;
  }

  /**
   * The model check (model-check.ts): every scope's indexed pods against a fresh match, every set of
   * the last pass's table against a fresh fill, in slices of CHECK_SLICE_MS; given up ('deferred')
   * when an event changes the model meanwhile. A difference is logged, counted as
   * errors{source="model"}, and the next pass applies the full recompute.
   */
  private async checkModel(): Promise<CheckResult> {
    const last = this.lastDesired;
    const addrs = this.o.nodeAddrs().join(',');
    const current = (): boolean => this.lastDesired === last && last !== undefined && last.gen === this.modelGen && last.addrs === addrs;
    if (last === undefined || !current()) return 'deferred';
    let run: SlicedRun<string | undefined> | undefined;
    try {
      run = await runSliced(modelCheckSteps(this.model, last.d, this.compiled), CHECK_SLICE_MS, current);
    } catch (e) {
      this.o.log.warn('network policy model check failed', { error: e });
      return 'equal';
    }
    if (run === undefined) return 'deferred';
    const diff = run.value;
    this.o.log.debug('network policy model checked', { same: diff === undefined, ms: round1(run.ms), slices: run.slices, longestSliceMs: round1(run.longestMs) });
    if (diff === undefined) return 'equal';
    this.o.metrics.inc(PM.errors, { source: 'model' });
    this.o.log.warn('network policy: the incremental model differs from a fresh match; applying the full recompute', { diff });
    this.fullNext = true;
    this.loop.trigger('model-check', 0);
    return 'differs';
  }

  /** For /healthz: the last pass's state. */
  health(): { ok: boolean; detail: string } {
    return this.lastError === '' ? { ok: true, detail: `${this.model.policyCount} policies, ${this.lastRules} rules` } : { ok: false, detail: `network policy: ${this.lastError}` };
  }

  /** Stops following the API; the table stays (policy stays enforced while weftd restarts). */
  stop(): void {
    this.loop.stop();
    this.resync.stop();
    this.view?.flush();
    for (const u of this.unsubscribe) u();
  }
}

/** The model check's slice (ms): the longest an event waits behind it. */
const CHECK_SLICE_MS = 4;

/** Passes that changed nothing are logged (debug) from this duration on. */
const SLOW_PASS_MS = 10;

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

function key(o: KubeObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

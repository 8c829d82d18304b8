// weftd --service-proxy's controller (runs in weftd's netns, the node's): Services and EndpointSlices
// from the shared watch cache -> desired content -> diff -> one nft transaction. Changes are coalesced
// per event-loop turn and diffed per Service; the kernel is listed at start, after a failure and now and then.
import type { AgentLog } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { NftRunOptions } from '../../lib/netfilter/types.ts';
import { listJsonOrNull } from '../../lib/netfilter/list-json.ts';
import { runNft } from '../../lib/netfilter/run.ts';
import { emptyContent, SVC_TABLE, type SvcContent } from './content.ts';
import { assumeApplied, diffContent } from './diff.ts';
import { nothingHeld, syncScript } from './apply.ts';
import { HairpinCounts, mergeAll, withoutHairpin } from './fragments.ts';
import type { Informer } from './informer.ts';
import { parseSvcListing, readSvcTable } from './kernel.ts';
import { serviceUnits, type ServicePortUnit } from './model.ts';
import { SM, defineServiceMetrics, observeLatency } from './metrics.ts';
import { renderAll } from './render.ts';
import { SERVICE_NAME_LABEL, type EndpointSlice, type ProxyNodeConfig, type Service } from './types.ts';

/** What the proxy needs. */
export interface ServiceProxyOptions {
  services: Informer<Service>;
  slices: Informer<EndpointSlice>;
  node: ProxyNodeConfig;
  log: AgentLog;
  metrics: Metrics;
  /** Where nft runs (tests: a node namespace); default the caller's netns. */
  nft?: NftRunOptions;
  /** Full re-list of the kernel table and full diff this often (drift from other tools). */
  resyncMs?: number;
  /** Called after each sync with the units of the Services it touched (health-check servers follow them). */
  onUnits?: (units: ReadonlyMap<string, readonly ServicePortUnit[]>) => void;
}

/** nft runs of the Service table may take seconds at 10,000 Services on a loaded node (nft lists the table first): not a stall. */
const NFT_TIMEOUT_MS = 120_000;

function sliceService(s: EndpointSlice): string | undefined {
  const n = s.metadata.labels?.[SERVICE_NAME_LABEL];
  return n === undefined || n === '' ? undefined : `${s.metadata.namespace ?? ''}/${n}`;
}

/** The running Service proxy. */
export class ServiceProxy {
  private readonly fragments = new Map<string, SvcContent>();
  private readonly units = new Map<string, ServicePortUnit[]>();
  private readonly slicesOf = new Map<string, Map<string, EndpointSlice>>();
  private readonly hairpin = new HairpinCounts();
  private readonly dirty = new Set<string>();
  private pendingSince: number | undefined;
  private needFull = true;
  private skeletonDone = false;
  private scheduled = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private retryMs = 100;
  private readonly unsubs: Array<() => void> = [];
  private stopped = false;
  /** False until both informers have listed: a sync before that would program a partial cluster (Services without their endpoints: rejects). */
  private ready = false;
  lastError = '';
  lastOk = 0;

  private readonly nftOpts: NftRunOptions;

  constructor(private readonly o: ServiceProxyOptions) {
    defineServiceMetrics(o.metrics);
    this.nftOpts = { timeoutMs: NFT_TIMEOUT_MS, ...o.nft };
  }

  /** Waits for both informers' first list, programs everything in one transaction, then follows events. */
  async start(): Promise<void> {
    const o = this.o;
    this.unsubs.push(o.services.subscribe((ev) => {
      if (ev.type === 'synced') return this.markAll();
      this.mark(`${ev.obj.metadata.namespace ?? ''}/${ev.obj.metadata.name}`);
    }));
    this.unsubs.push(o.slices.subscribe((ev) => {
      if (ev.type === 'synced') return this.markAll();
      if (ev.type === 'modified') this.indexSlice(ev.old, true);
      this.indexSlice(ev.obj, ev.type === 'deleted');
    }));
    await Promise.all([o.services.synced, o.slices.synced]);
    this.slicesOf.clear();
    for (const s of o.slices.list()) this.indexSlice(s, false, false);
    this.needFull = true;
    this.ready = true;
    this.syncNow();
    if (o.resyncMs !== undefined) {
      this.resyncTimer = setInterval(() => { this.needFull = true; this.schedule(); }, o.resyncMs);
      this.resyncTimer.unref();
    }
  }

  private indexSlice(s: EndpointSlice, remove: boolean, markIt = true): void {
    const svc = sliceService(s);
    if (svc === undefined) return;
    const k = `${s.metadata.namespace ?? ''}/${s.metadata.name}`;
    let m = this.slicesOf.get(svc);
    if (remove) m?.delete(k);
    else {
      if (m === undefined) this.slicesOf.set(svc, (m = new Map()));
      m.set(k, s);
    }
    if (markIt) this.mark(svc);
  }

  private mark(svcKey: string): void {
    this.dirty.add(svcKey);
    this.pendingSince ??= performance.now();
    this.schedule();
  }

  private markAll(): void {
    this.needFull = true;
    this.pendingSince ??= performance.now();
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.stopped || !this.ready || this.retryTimer !== undefined) return;
    this.scheduled = true;
    // One turn of the event loop: a watch chunk's events become one transaction.
    setImmediate(() => {
      this.scheduled = false;
      this.syncNow();
    });
  }

  private renderService(key: string): { frag: SvcContent | undefined; units: ServicePortUnit[] } {
    const svc = this.o.services.get(key);
    if (svc === undefined) return { frag: undefined, units: [] };
    const units = serviceUnits(svc, [...(this.slicesOf.get(key)?.values() ?? [])], this.o.node);
    return { frag: renderAll(units, this.o.node), units };
  }

  /** One sync (synchronous): full when needed, else only the dirty Services. */
  syncNow(): void {
    if (this.stopped) return;
    const t0 = performance.now();
    const since = this.pendingSince;
    const full = this.needFull;
    const dirty = full ? undefined : [...this.dirty];
    this.dirty.clear();
    this.pendingSince = undefined;
    const touched = new Map<string, ServicePortUnit[]>();
    try {
      let script: string;
      if (full) {
        const frags = new Map<string, SvcContent>();
        for (const svc of this.o.services.list()) {
          const key = `${svc.metadata.namespace ?? ''}/${svc.metadata.name}`;
          const r = this.renderService(key);
          if (r.frag !== undefined) frags.set(key, r.frag);
          touched.set(key, r.units);
        }
        const have = readSvcTable(this.nftOpts);
        const plan = diffContent(mergeAll(frags.values()), have ?? nothingHeld());
        // The skeleton's fixed chains are rewritten at start and whenever the table was gone.
        script = syncScript(plan, this.o.node, !this.skeletonDone || have === null);
        if (script !== '') runNft(['-f', '-'], script, this.nftOpts);
        this.fragments.clear();
        this.units.clear();
        for (const [k, f] of frags) this.fragments.set(k, f);
        for (const [k, u] of touched) this.units.set(k, u);
        this.hairpin.reset(this.fragments.values());
        this.skeletonDone = true;
        this.needFull = false;
        this.o.metrics.inc(SM.syncs, { kind: 'full' });
        this.o.log.info('service table synced', { services: frags.size, commands: plan.commands.length, ms: Math.round(performance.now() - t0) });
      } else {
        const cmds: string[] = [];
        const next = new Map<string, SvcContent | undefined>();
        for (const key of dirty ?? []) {
          const r = this.renderService(key);
          const before = this.fragments.get(key);
          const have = assumeApplied(withoutHairpin(before ?? emptyContent()));
          for (const name of r.frag?.affinity.keys() ?? []) have.affinity.set(name, this.listAffinity(name));
          cmds.push(...diffContent(withoutHairpin(r.frag ?? emptyContent()), have).commands, ...this.hairpin.update(before, r.frag));
          next.set(key, r.frag);
          touched.set(key, r.units);
        }
        script = cmds.length === 0 ? '' : `${cmds.join('\n')}\n`;
        if (script !== '') runNft(['-f', '-'], script, this.nftOpts);
        for (const [k, f] of next) {
          if (f === undefined) this.fragments.delete(k);
          else this.fragments.set(k, f);
          const u = touched.get(k) ?? [];
          if (u.length === 0) this.units.delete(k);
          else this.units.set(k, u);
        }
        if (script !== '') this.o.metrics.inc(SM.syncs, { kind: 'incremental' });
      }
      if (since !== undefined) observeLatency(this.o.metrics, (performance.now() - since) / 1000);
      this.retryMs = 100;
      this.lastOk = Date.now();
      this.lastError = '';
      this.publish();
      this.o.onUnits?.(touched);
    } catch (e) {
      this.o.metrics.inc(SM.failures);
      this.lastError = (e as Error).message;
      this.o.log.error('service table sync failed; the previous state stays, retrying with a full sync', { error: e, retryMs: this.retryMs });
      // Whatever was dirty is covered by the full sync; its latency counts from the first change.
      this.needFull = true;
      this.pendingSince = since ?? performance.now();
      this.retryTimer = setTimeout(() => { this.retryTimer = undefined; this.syncNow(); }, this.retryMs);
      this.retryTimer.unref();
      this.retryMs = Math.min(this.retryMs * 2, 5000);
    }
    this.o.metrics.set(SM.lastSync, (performance.now() - t0) / 1000);
  }

  private listAffinity(name: string): { clients: Map<string, string> } {
    const json = listJsonOrNull(['map', SVC_TABLE.family, SVC_TABLE.name, name], this.nftOpts);
    return json === null ? { clients: new Map() } : (parseSvcListing(json).affinity.get(name) ?? { clients: new Map() });
  }

  private publish(): void {
    let units = 0;
    const eps = new Set<string>();
    for (const us of this.units.values()) {
      units += us.length;
      for (const u of us) for (const b of [...u.cluster, ...u.internal, ...u.external]) eps.add(`${b.ip}|${b.port}|${u.proto}`);
    }
    this.o.metrics.set(SM.services, this.units.size);
    this.o.metrics.set(SM.units, units);
    this.o.metrics.set(SM.endpoints, eps.size);
  }

  /** The units of every programmed Service (health checks, doctor). */
  allUnits(): ReadonlyMap<string, readonly ServicePortUnit[]> {
    return this.units;
  }

  /** Stops following events; the table stays as it is (running flows keep their conntrack entries). */
  stop(): void {
    this.stopped = true;
    for (const u of this.unsubs.splice(0)) u();
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    if (this.resyncTimer !== undefined) clearInterval(this.resyncTimer);
  }
}


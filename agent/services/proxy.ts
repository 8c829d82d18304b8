// weftd --service-proxy's controller (runs in weftd's netns, the node's): Services and EndpointSlices
// from the shared watch cache -> desired content -> diff -> kernel. An incremental sync is one
// transaction: over nf_tables netlink in-process when only elements change (endpoints, usually), else
// one `nft -f`; a full sync goes batch by batch of Services (full-sync.ts). Changes are coalesced per
// event-loop turn and diffed per Service; the kernel is listed at start, after a failure and now and then.
import type { AgentLog } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { NftRunOptions } from '../../lib/netfilter/types.ts';
import { listJsonOrNull } from '../../lib/netfilter/list-json.ts';
import { runNft } from '../../lib/netfilter/run.ts';
import { AFFINITY_MAP, emptyContent, SVC_TABLE, type KernelAffinity, type SvcContent } from './content.ts';
import { assumeApplied, diffContent, formatElemOp, nodePortKey, recordSlots, type ElemOp, type SvcPlan } from './diff.ts';
import { FIXED_CHAINS, skeletonScript } from './skeleton.ts';
import { nothingHeld, syncScript } from './apply.ts';
import { FULL_SYNC_BATCH, fullSync } from './full-sync.ts';
import { commitElemCommands, elemOpBatches, elemOpCommands } from './nfnl-apply.ts';
import type { NfnlSocket } from '../../lib/netfilter/nfnl/socket.ts';
import { openNfnlSocketIn } from '../../lib/netfilter/nfnl/open-in.ts';
import { EndpointRefs } from './endpoint-refs.ts';
import { HairpinCounts, compactContent, unitHairpins, withoutHairpin } from './fragments.ts';
import { decodeUnits, programmedOf, replay, type Programmed } from './programmed.ts';
import type { Informer } from './informer.ts';
import { parseSvcListing, readSvcTable } from './kernel.ts';
import { serviceUnits, type ServicePortUnit } from './model.ts';
import { SM, defineServiceMetrics, observeLatency } from './metrics.ts';
import { paceYoungGeneration } from '../memory.ts';
import { capacitiesOf, renderAll } from './render.ts';
import { flushStaleUdp, staleUdpEndpoints, type StaleUdp } from './conntrack.ts';
import { SliceIndex } from './slice-index.ts';
import type { EndpointSlice, ProxyNodeConfig, Service } from './types.ts';

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

/** A Service's fragment as its own diff sees it: no hairpin pairs (counted across Services) and no recorder chains (shared; made once, removed by a full sync). */
function perService(c: SvcContent | undefined): SvcContent {
  return { ...withoutHairpin(c ?? emptyContent()), chains: new Map() };
}

/** The running Service proxy. */
export class ServiceProxy {
  /** Per programmed Service, its units and slot state in compact form (programmed.ts); a sync re-renders the "before" of the Services it touches from it. */
  private readonly programmed = new Map<string, Programmed>();
  private readonly slicesOf = new SliceIndex();
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
  /** How the last sync that changed something reached the kernel. */
  lastPath: 'nft' | 'netlink' | 'none' = 'none';
  private sock: NfnlSocket | undefined;
  /** Programmed endpoints -> how many units hold them, and the number of units. */
  private readonly epRefs = new EndpointRefs();
  private unitCount = 0;
  /** Chains the table holds (the skeleton's and the affinity recorders made so far); unused recorders go at the next full sync. */
  private readonly kernelChains = new Set<string>(FIXED_CHAINS);

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
    const svc = remove ? this.slicesOf.remove(s) : this.slicesOf.add(s);
    if (svc !== undefined && markIt) this.mark(svc);
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

  /** A Service's fragment and units as the informers have it now; `before` (its programmed fragment) gives the slot capacities to keep. */
  private renderService(key: string, before: SvcContent | undefined): { frag: SvcContent | undefined; units: ServicePortUnit[] } {
    const svc = this.o.services.get(key);
    if (svc === undefined) return { frag: undefined, units: [] };
    const units = serviceUnits(svc, this.slicesOf.of(key), this.o.node);
    return { frag: compactContent(renderAll(units, this.o.node, capacitiesOf(before))), units };
  }

  /** Every Service's key, read lazily from the informer. */
  private *serviceKeys(): Generator<string> {
    for (const svc of this.o.services.list()) yield `${svc.metadata.namespace ?? ''}/${svc.metadata.name}`;
  }

  /** The netlink socket in the table's netns, opened on first use. */
  private socket(): NfnlSocket {
    this.sock ??= openNfnlSocketIn(this.o.nft?.netnsPath);
    return this.sock;
  }

  /** Applies an incremental sync's transaction: element changes alone over netlink, anything with structure through `nft -f`. */
  private apply(plan: SvcPlan): void {
    if (plan.commands.length === 0) return;
    if (plan.head.length === 0 && plan.tail.length === 0) {
      const cmds = elemOpCommands(plan.elems);
      if (cmds !== undefined) {
        commitElemCommands(this.socket(), cmds);
        this.lastPath = 'netlink';
        return;
      }
    }
    runNft(['-f', '-'], syncScript(plan, this.o.node, false), this.nftOpts);
    this.lastPath = 'nft';
  }

  /** One sync (synchronous): full when needed, else only the dirty Services. */
  syncNow(): void {
    if (this.stopped) return;
    // The young generation may have shrunk while idle: it may grow again, up to the cap.
    paceYoungGeneration();
    const t0 = performance.now();
    const since = this.pendingSince;
    const full = this.needFull;
    const dirty = full ? undefined : [...this.dirty];
    this.dirty.clear();
    this.pendingSince = undefined;
    let touched = new Map<string, ServicePortUnit[]>();
    const stale: StaleUdp[] = [];
    try {
      if (full) {
        const have = readSvcTable(this.nftOpts, this.socket());
        const skeleton = !this.skeletonDone || have === null ? skeletonScript(this.o.node) : [];
        // Not at start: the table weftd finds is already in use, and its flows are translated.
        const flows = this.skeletonDone;
        const seen = new Set<string>();
        // The programmed units of the Services rendered and not yet applied (one batch).
        const olds = new Map<string, ServicePortUnit[]>();
        // A full sync touches every Service: their units go to onUnits a batch at a time, not all kept until the end.
        const report = (k: string, units: ServicePortUnit[]) => {
          touched.set(k, units);
          if (touched.size < FULL_SYNC_BATCH) return;
          this.o.onUnits?.(touched);
          touched = new Map();
        };
        const res = fullSync(this.serviceKeys(), (k) => {
          const b = replay(this.programmed.get(k));
          olds.set(k, b.units);
          return this.renderService(k, b.frag);
        }, (k, frag, units) => {
          const old = olds.get(k) ?? [];
          olds.delete(k);
          if (flows) stale.push(...staleUdpEndpoints(old, units));
          this.setProgrammed(k, old, frag, units);
          seen.add(k);
          report(k, units);
        }, have ?? nothingHeld(), this.hairpin, {
          structure: (lines) => runNft(['-f', '-'], `${lines.join('\n')}\n`, this.nftOpts),
          elements: (ops) => { for (const b of elemOpBatches(ops)) commitElemCommands(this.socket(), b); },
        }, skeleton);
        // Services gone since the last sync: their elements were deleted as unclaimed.
        for (const [k, p] of [...this.programmed]) {
          if (seen.has(k)) continue;
          const old = decodeUnits(p.units);
          if (flows) stale.push(...staleUdpEndpoints(old, []));
          this.setProgrammed(k, old, undefined, []);
          report(k, []);
        }
        this.lastPath = res.usedNft ? 'nft' : 'netlink';
        this.kernelChains.clear();
        for (const n of [...FIXED_CHAINS, ...res.chains]) this.kernelChains.add(n);
        this.skeletonDone = true;
        this.needFull = false;
        this.o.metrics.inc(SM.syncs, { kind: 'full' });
        this.o.log.info('service table synced', { services: res.services, commands: res.elementsAdded + res.elementsDeleted, ms: Math.round(performance.now() - t0) });
      } else {
        const all: SvcPlan = { head: [], elems: [], tail: [], commands: [], epSlots: new Map(), chainsAdded: 0, chainsChanged: 0, chainsDeleted: 0, elementsAdded: 0, elementsDeleted: 0 };
        const hairpin: ElemOp[] = [];
        const next = new Map<string, { frag: SvcContent | undefined; units: ServicePortUnit[]; old: ServicePortUnit[] }>();
        // Hairpin counts move as the Services are diffed: on a refused transaction they are rebuilt by the full sync.
        let pinned: Map<string, KernelAffinity> | undefined;
        const newChains = new Set<string>();
        for (const key of dirty ?? []) {
          const b = replay(this.programmed.get(key));
          const before = b.frag;
          const r = this.renderService(key, before);
          const have = assumeApplied(perService(before));
          const want = perService(r.frag);
          // Clients pinned through this Service's keys (the shared map listed once per sync, only when affinity is involved).
          const keys = new Set([...(before?.affinity.keys() ?? []), ...(r.frag?.affinity.keys() ?? [])]);
          if (keys.size > 0) {
            pinned ??= this.listAffinity();
            for (const [g, held] of pinned) if (keys.has(g) || keys.has(nodePortKey(g))) have.affinity.set(g, held);
          }
          const plan = diffContent(want, have);
          if (r.frag !== undefined) recordSlots(r.frag, plan);
          for (const [name, ch] of r.frag?.chains ?? []) {
            if (this.kernelChains.has(name) || newChains.has(name)) continue;
            newChains.add(name);
            all.head.push(`add chain ${SVC_TABLE.family} ${SVC_TABLE.name} ${name}`, ...ch.rules.map((x, i) => `add rule ${SVC_TABLE.family} ${SVC_TABLE.name} ${name} ${x}${i === 0 ? ` comment "${ch.comment}"` : ''}`));
          }
          all.elems.push(...plan.elems);
          all.commands.push(...plan.commands);
          hairpin.push(...this.hairpin.update(unitHairpins(b.units), unitHairpins(r.units)));
          next.set(key, { ...r, old: b.units });
          touched.set(key, r.units);
        }
        all.commands.unshift(...all.head);
        all.elems.push(...hairpin);
        all.commands.push(...hairpin.map(formatElemOp));
        this.apply(all);
        for (const n of newChains) this.kernelChains.add(n);
        for (const [k, n] of next) {
          stale.push(...staleUdpEndpoints(n.old, n.units));
          this.setProgrammed(k, n.old, n.frag, n.units);
        }
        if (all.commands.length > 0) this.o.metrics.inc(SM.syncs, { kind: this.lastPath === 'netlink' ? 'elements' : 'incremental' });
      }
      if (since !== undefined) observeLatency(this.o.metrics, (performance.now() - since) / 1000);
      this.retryMs = 100;
      this.lastOk = Date.now();
      this.lastError = '';
      this.publish();
      flushStaleUdp(stale, this.o.log, this.o.nft?.netnsPath);
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

  /** The shared affinity map's clients, grouped by affinity key. */
  private listAffinity(): Map<string, KernelAffinity> {
    const json = listJsonOrNull(['map', SVC_TABLE.family, SVC_TABLE.name, AFFINITY_MAP], this.nftOpts);
    return json === null ? new Map() : parseSvcListing(json).affinity;
  }

  /** Replaces one Service's record (`old`: its units before, `frag` and `units`: applied now), keeping the programmed counts (a sync touches a few Services; the counts cover all). */
  private setProgrammed(key: string, old: readonly ServicePortUnit[], frag: SvcContent | undefined, units: readonly ServicePortUnit[]): void {
    const count = (us: readonly ServicePortUnit[] | undefined, d: 1 | -1) => {
      for (const u of us ?? []) {
        this.unitCount += d;
        const eps = new Map([...u.cluster, ...u.internal, ...u.external].map((b) => [`${b.ip}|${b.port}`, b]));
        for (const b of eps.values()) this.epRefs.move(b.ip, b.port, u.proto, d);
      }
    };
    count(old, -1);
    count(units, 1);
    const p = programmedOf(frag, units);
    if (p === undefined) this.programmed.delete(key);
    else this.programmed.set(key, p);
  }

  private publish(): void {
    this.o.metrics.set(SM.services, this.programmed.size);
    this.o.metrics.set(SM.units, this.unitCount);
    this.o.metrics.set(SM.endpoints, this.epRefs.size);
  }

  /** The units of every programmed Service, decoded on each call (doctor, tests). */
  allUnits(): ReadonlyMap<string, readonly ServicePortUnit[]> {
    return new Map([...this.programmed].map(([k, p]) => [k, decodeUnits(p.units)]));
  }

  /** Stops following events; the table stays as it is (running flows keep their conntrack entries). */
  stop(): void {
    this.stopped = true;
    for (const u of this.unsubs.splice(0)) u();
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    if (this.resyncTimer !== undefined) clearInterval(this.resyncTimer);
    this.sock?.close();
    this.sock = undefined;
  }
}


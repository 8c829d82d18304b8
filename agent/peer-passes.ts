// weftd's reconcile passes (in the node's netns): the lease table they converge routes, neighbours
// and FDB entries to, the loop that runs them on lease, netlink and periodic triggers, and what the
// last passes programmed (gauges, health).
import { isExists, type Rtnl, type RtnlEvent } from '../lib/netlink/index.ts';
import { M } from './agent-metrics.ts';
import type { Backend, UplinkV6 } from './backend/index.ts';
import { type Lease, type LeaseEvent, type LeaseStore, leaseKey } from './lease/store.ts';
import type { AgentLog } from './log.ts';
import type { Metrics } from './metrics.ts';
import { logPassTiming } from './pass-timing.ts';
import { describeOp } from './reconcile/apply.ts';
import { LeaseChanges } from './reconcile/changes.ts';
import type { DevIndexes, Op } from './reconcile/diff.ts';
import { isDrift } from './reconcile/drift.ts';
import { familyTargets, reconcileFamilySlices, reconcileJoined } from './reconcile/family.ts';
import { ReconcileLoop, runToEnd, type PassSlices } from './reconcile/loop.ts';
import { TouchedPeers } from './reconcile/touched.ts';
import type { Uplink } from './uplink.ts';

/**
 * Share of time the safety-net passes may take: --resync-interval is the shortest period, and a
 * full pass over thousands of peers (each reads every route, neighbour and FDB entry) stretches it,
 * so that it neither keeps a core busy nor holds joins behind it (see reconcile/loop.ts).
 */
const RESYNC_MAX_DUTY = 0.05;

/**
 * Most joined peers a pass programs at once, without yielding: more (a batch of Nodes, a restart of
 * many) take a full pass, which runs in bounded slices, so a join behind them waits one slice.
 */
const JOINED_AT_ONCE = 64;

/** What the passes act on; all fixed for weftd's life but the own lease (taken again when lost). */
export interface PassContext {
  rtnl: Rtnl;
  backend: Backend;
  store: LeaseStore;
  uplink: Uplink;
  uplink6: UplinkV6 | undefined;
  metrics: Metrics;
  log: AgentLog;
  own: () => Lease;
  /** Safety-net reconcile period and the debounce of triggers (--resync-interval, flags.ts). */
  resyncMs: number;
  debounceMs: number;
}

/** The lease table and the passes that program it, run in the calling thread's netns. */
export class PeerPasses {
  private readonly leases = new Map<string, Lease>();
  /** Lease changes since the last pass: peers that only joined are programmed alone (reconcile/changes.ts). */
  private readonly changes = new LeaseChanges();
  /** The programmed-entry gauges of the last full pass plus what joins added since. */
  private readonly programmed = { route: 0, neigh: 0, fdb: 0 };
  private loop: ReconcileLoop | undefined;
  private timing: ReturnType<typeof logPassTiming> | undefined;
  /** While a full pass is suspended between slices: the peers it must leave alone. */
  private touched: TouchedPeers | undefined;
  /** Device indexes of the last pass, to tell our neighbour/FDB notifications from others. */
  private dev: DevIndexes | undefined;
  /** When the last pass without a failed change ended (epoch ms; 0: none yet), and the last failure. */
  lastOk = 0;
  lastError = '';

  constructor(private readonly c: PassContext) {}

  /** Lists the leases, runs the first full pass to its end and starts the loop; resolves with the list's revision. */
  async start(): Promise<number> {
    this.timing = logPassTiming(this.c.log);
    this.loop = new ReconcileLoop((why) => this.pass(why), { debounceMs: this.c.debounceMs, periodMs: this.c.resyncMs, maxDuty: RESYNC_MAX_DUTY, onPass: this.timing.onPass });
    const { leases, revision } = await this.c.store.list();
    for (const l of leases) this.leases.set(leaseKey(l), l);
    const first = this.pass('start');
    if (first !== undefined) runToEnd(first);
    this.loop.start();
    return revision;
  }

  /** A lease event from the store's watch: the table follows it and a pass is due at once. */
  leaseEvent(ev: LeaseEvent): void {
    this.c.metrics.inc(M.leaseEvents, { type: ev.type });
    const key = leaseKey(ev.lease);
    const old = this.leases.get(key);
    if (old !== undefined) this.touched?.add(old);
    this.touched?.add(ev.lease);
    this.changes.note(key, ev.type === 'added' && !this.leases.has(key) ? 'new' : 'other');
    if (ev.type === 'added') this.leases.set(key, ev.lease);
    else this.leases.delete(key);
    this.c.log.debug('lease event', { type: ev.type, subnet: ev.lease.subnet, publicIp: ev.lease.publicIp });
    this.loop?.trigger('lease', 0);
  }

  /** A netlink notification: a pass is due when it may be drift from what the passes program. */
  netlinkEvent(ev: RtnlEvent): void {
    if (isDrift(ev, this.c.store.netConf, this.dev, (l) => this.c.backend.watchesLink(l))) this.loop?.trigger(`netlink-${ev.type}`);
  }

  /** Marks a peer that a suspended full pass must leave alone (it changed meanwhile). */
  touch(l: Lease): void {
    this.touched?.add(l);
  }

  /** Asks the loop for a pass (`why` is its trigger label, as in the `pass` log line). */
  trigger(why: string): void {
    this.loop?.trigger(why);
  }

  stop(): void {
    this.loop?.stop();
    this.timing?.stop();
  }

  /**
   * One reconcile pass: when only new peers (JOINED_AT_ONCE at most) joined since the last pass,
   * one that adds just their entries, at once; otherwise a full one (kernel state read and diffed
   * against every lease),
   * returned as slices that the loop runs one per turn of the event loop, so joins arriving
   * meanwhile are programmed between them (reconcile/loop.ts, touched.ts).
   */
  private pass(why: string): PassSlices | undefined {
    const scope = this.changes.take(why);
    const joined = (subnets: string[]) => subnets.map((s) => this.leases.get(s)).filter((l): l is Lease => l !== undefined);
    if (scope.full) {
      // A join that met a periodic or netlink trigger: programmed now, the full pass in slices after.
      const first = scope.first ?? [];
      if (first.length > 0 && first.length <= JOINED_AT_ONCE) runToEnd(this.passSlices(why, joined(first)));
      return this.passSlices(why, undefined);
    }
    if (scope.joined.length > JOINED_AT_ONCE) return this.passSlices(why, undefined);
    runToEnd(this.passSlices(why, joined(scope.joined)));
    return undefined;
  }

  /** A pass over `joined` only (it never yields), or with undefined a full pass in slices. */
  private *passSlices(why: string, joined: Lease[] | undefined): Generator<void, void, undefined> {
    const c = this.c;
    const t0 = performance.now();
    c.metrics.inc(M.runs, { trigger: why.split(',')[0] ?? why });
    // What a full pass leaves alone: peers whose leases change, or that joins program, while it is suspended.
    const touched = new TouchedPeers();
    if (joined === undefined) this.touched = touched;
    else for (const l of joined) this.touched?.add(l);
    try {
      const own = c.own();
      const dev = c.backend.ensureLocal(c.rtnl, own);
      this.dev = dev;
      c.backend.syncLeases?.([...this.leases.values()], own);
      const conf = c.store.netConf;
      const sums = { route: 0, neigh: 0, fdb: 0, conflicts: 0, failed: [] as Error[] };
      const leases = joined ?? [...this.leases.values()];
      for (const t of familyTargets(conf, own, c.uplink, c.uplink6)) {
        const base = { backend: c.backend.type, directRouting: conf.backend.directRouting, vni: conf.backend.vni };
        const applied = (op: Op) => {
          c.metrics.inc(M.changes, { op: op.kind });
          c.log.info('programmed', { change: describeOp(op), trigger: why });
        };
        const { desired, plan, out } = joined ? reconcileJoined(c.rtnl, t, base, joined, dev, applied) : yield* reconcileFamilySlices(c.rtnl, t, base, leases, dev, touched, applied);
        // A joined peer's route meeting one already there is no error: the full pass it triggers decides.
        const clash = (x: { op: Op; error: Error }) => joined !== undefined && x.op.kind === 'add-route' && isExists(x.error);
        if (out.failed.some(clash)) this.changes.requireFull();
        for (const x of out.failed) {
          if (clash(x)) continue;
          c.metrics.inc(M.errors, { source: 'apply' });
          c.log.warn('change failed', { change: describeOp(x.op), error: x.error });
        }
        for (const conflict of plan.conflicts) c.log.warn('route exists and is not ours: left alone', conflict);
        if (plan.adopted.length > 0) c.log.info('took over peer routes flanneld programmed (proto boot, exactly as the leases want them)', { routes: plan.adopted.map((a) => `${a.dst} via ${a.gw}`) });
        const failedAdds = (kind: Op['kind']) => out.failed.filter((x) => x.op.kind === kind).length;
        sums.route += desired.routes.length - plan.conflicts.length - failedAdds('add-route');
        sums.neigh += desired.neighs.length - failedAdds('add-neigh');
        sums.fdb += desired.fdbs.length - failedAdds('add-fdb');
        sums.conflicts += plan.conflicts.length;
        sums.failed.push(...out.failed.filter((x) => !clash(x)).map((x) => x.error));
      }
      this.count(joined !== undefined, sums);
      if (sums.failed.length > 0) this.changes.requireFull();
      if (joined && this.changes.fullRequired) this.loop?.trigger('full-after-join', 0);
      if (sums.failed.length === 0) {
        this.lastOk = Date.now();
        this.lastError = '';
      } else {
        this.lastError = sums.failed[0]?.message ?? '';
      }
    } catch (e) {
      this.changes.requireFull();
      c.metrics.inc(M.errors, { source: 'reconcile' });
      this.lastError = (e as Error).message;
      c.log.error('reconcile failed', { trigger: why, error: e });
    } finally {
      if (joined === undefined) this.touched = undefined;
    }
    c.metrics.set(M.lastReconcile, Date.now() / 1000);
    c.metrics.set(M.reconcileSeconds, (performance.now() - t0) / 1000);
  }

  /** The programmed-entry gauges: a join pass adds its entries, a full pass sets them (and the conflicts). */
  private count(join: boolean, sums: { route: number; neigh: number; fdb: number; conflicts: number }): void {
    const p = this.programmed;
    if (join) {
      p.route += sums.route;
      p.neigh += sums.neigh;
      p.fdb += sums.fdb;
    } else {
      Object.assign(p, { route: sums.route, neigh: sums.neigh, fdb: sums.fdb });
      this.c.metrics.set(M.conflicts, sums.conflicts);
    }
    for (const kind of ['route', 'neigh', 'fdb'] as const) this.c.metrics.set(M.programmed, p[kind], { kind });
    this.c.metrics.set(M.leases, this.leases.size);
  }
}

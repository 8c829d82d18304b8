// The weftd daemon: takes this node's lease, keeps the backend device, subnet.env and ip-masq in
// place, and converges the node's netns (the one it runs in) to the lease table on every lease
// event, on relevant netlink events and periodically. Stopping leaves the data plane and the lease.
import type { Server } from 'node:http';
import { ensureIpMasq, masqNetworks } from './ip-masq.ts';
import { ensureForwardRules, FORWARD_RESYNC_MS } from './forward-rules.ts';
import { Rtnl, RtnlEvents, isExists } from '../lib/netlink/index.ts';
import { M, createAgentMetrics } from './agent-metrics.ts';
import { createBackend, type Backend, type UplinkV6 } from './backend/index.ts';
import { findUplinkV6 } from './backend/uplink-v6.ts';
import { hasIPv6 } from './config/net-conf.ts';
import { openLeaseStore, type StoreFlags } from './lease/open-store.ts';
import { type Lease, type LeaseStore, type Watch, leaseKey, leaseName } from './lease/store.ts';
import type { AgentLog } from './log.ts';
import type { Metrics } from './metrics.ts';
import { serveMetrics } from './metrics.ts';
import { describeOp } from './reconcile/apply.ts';
import { isDrift } from './reconcile/drift.ts';
import type { DevIndexes, Op } from './reconcile/diff.ts';
import { LeaseChanges } from './reconcile/changes.ts';
import { familyTargets, reconcileFamilySlices, reconcileJoined } from './reconcile/family.ts';
import { ReconcileLoop, runToEnd, type PassSlices } from './reconcile/loop.ts';
import { TouchedPeers } from './reconcile/touched.ts';
import { logPassTiming } from './pass-timing.ts';
import { writeSubnetEnv } from '../lib/flannel/subnet-env.ts';
import { previousIpv6Subnet, previousSubnet } from './previous-subnet.ts';
import { findUplink, type Uplink, type UplinkQuery } from './uplink.ts';
import { checkSubnetFileWritable } from './preflight.ts';
import { earlyStillFits, startUdpEarly } from './backend/udp-early.ts';
import type { ServiceProxyFlags } from './services/flags.ts';
import { refuseBesideKubeProxy } from './services/kube-proxy-present.ts';
import type { RunningServiceProxy } from './services/start.ts';
import type { KubeApi } from './kube/api.ts';
import type { KubeConnFlags } from './kube/config.ts';
import type { WatchCache } from './kube/watch-cache.ts';
import type { NetworkPolicyHandle } from './policy/start.ts';
import { policyNodeAddrs, policyIsLocal } from './policy/node.ts';
import { policyViewPath } from './policy/state.ts';

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

/** How often the --ip-masq chain is re-applied (it is not watched like routes are). */
const IPMASQ_RESYNC_MS = 30_000;

/** Everything weftd needs, normalised from the CLI (see flags.ts). */
export interface WeftdOptions {
  store: StoreFlags;
  uplink: UplinkQuery;
  /** --public-ipv6: the IPv6 address peers send to when the net-conf enables IPv6 (default: the uplink's first global one). */
  publicIpv6?: string;
  subnetFile: string;
  ipMasq: boolean;
  /** --iptables-forward-rules: accepts for the Network in foreign forward chains with policy drop (off: removes weftd's). */
  forwardRules: boolean;
  /** --network-policy: enforce NetworkPolicy, reaching the API as --kube-subnet-mgr does. */
  networkPolicy?: { kubeconfigFile?: string; kubeApiUrl?: string };
  metricsAddr?: string;
  /** Safety-net reconcile period; events normally act first. */
  resyncMs: number;
  debounceMs: number;
  log: AgentLog;
  /** --service-proxy: Services programmed in table inet weft-svc (docs/services.md). */
  serviceProxy?: ServiceProxyFlags;
}

/** A running weftd. */
export class Weftd {
  private readonly leases = new Map<string, Lease>();
  /** Lease changes since the last pass: peers that only joined are programmed alone (reconcile/changes.ts). */
  private readonly changes = new LeaseChanges();
  /** The programmed-entry gauges of the last full pass plus what joins added since. */
  private readonly programmed = { route: 0, neigh: 0, fdb: 0 };
  private loop: ReconcileLoop | undefined;
  private timing: ReturnType<typeof logPassTiming> | undefined;
  /** While a full pass is suspended between slices: the peers it must leave alone. */
  private touched: TouchedPeers | undefined;
  private events: RtnlEvents | undefined;
  private watch: Watch | undefined;
  private services: RunningServiceProxy | undefined;
  /** The API connection the controllers share when the lease store is not the kube one. */
  private controllersKube: KubeApi | undefined;
  private lastOk = 0;
  private lastError = '';
  private masqTimer: NodeJS.Timeout | undefined;
  private forwardTimer: NodeJS.Timeout | undefined;
  private policy: NetworkPolicyHandle | undefined;
  /** Device indexes of the last pass, to tell our neighbour/FDB notifications from others. */
  private dev: DevIndexes | undefined;

  private constructor(
    readonly metrics: Metrics,
    private readonly server: Server | undefined,
    private readonly o: WeftdOptions,
    private readonly rtnl: Rtnl,
    private readonly uplink: Uplink,
    private readonly uplink6: UplinkV6 | undefined,
    private readonly store: LeaseStore,
    private readonly backend: Backend,
    private own: Lease,
  ) {}

  /** Starts weftd in the calling thread's netns; resolves once the lease is held and the first pass ran. */
  static async start(o: WeftdOptions): Promise<Weftd> {
    // Before anything is written: two Service proxies on one node would both DNAT the ClusterIPs.
    if (o.serviceProxy !== undefined) refuseBesideKubeProxy();
    checkSubnetFileWritable(o.subnetFile);
    const rtnl = Rtnl.open();
    let uplink: Uplink;
    try {
      uplink = findUplink(rtnl, o.uplink);
    } catch (e) {
      rtnl.close();
      throw e;
    }
    o.log.info('uplink', { ...uplink });
    // Bound before the lease is taken: a port in use or an address the node lacks fails here.
    const metrics = createAgentMetrics();
    let running: Weftd | undefined;
    let server: Server | undefined;
    try {
      if (o.metricsAddr !== undefined) server = await serveMetrics(o.metricsAddr, metrics, () => running?.health() ?? { ok: false, detail: 'starting: no lease yet' });
    } catch (e) {
      rtnl.close();
      throw new Error(`cannot serve /healthz and /metrics on ${o.metricsAddr ?? ''} (--metrics-addr, --healthz-ip/--healthz-port): ${(e as Error).message}`, { cause: e });
    }
    // udp: flannel0 died with the previous agent; forward again before the slow store start-up.
    const early = await startUdpEarly(o, rtnl, uplink);
    let store: LeaseStore;
    try {
      store = await openLeaseStore({ ...o.store, onError: (e) => o.log.warn('lease store', { error: e }) });
    } catch (e) {
      early?.backend.stop();
      server?.close();
      rtnl.close();
      throw e;
    }
    try {
      const uplink6 = hasIPv6(store.netConf) ? findUplinkV6(rtnl, uplink, o.publicIpv6) : undefined;
      if (uplink6 !== undefined) o.log.info('uplink IPv6', { ...uplink6 });
      // udp is IPv4-only: with EnableIPv6 createBackend refuses it, so the early forwarder is never reused then.
      const reuse = early !== undefined && uplink6 === undefined && !hasIPv6(store.netConf) && earlyStillFits(early, store.netConf);
      if (!reuse) early?.backend.stop();
      const backend: Backend = reuse ? early.backend : createBackend(store.netConf.backend, uplink, {
        subnetFile: o.subnetFile, log: o.log, network: store.netConf.network, ...(uplink6 !== undefined ? { ipv6: uplink6 } : {}),
        ...(store.netConf.ipv6Network !== undefined ? { ipv6Network: store.netConf.ipv6Network } : {}),
      });
      backend.adoptLocal?.(rtnl);
      const preferred = previousSubnet(o.subnetFile, store.netConf.network);
      const v6Data = backend.backendV6Data?.();
      const own = await store.acquire({
        publicIp: uplink.publicIp, backendType: backend.type, backendData: backend.backendData(),
        ...(preferred !== undefined ? { preferredSubnet: preferred } : {}), ...previousIpv6Subnet(o.subnetFile, store.netConf.ipv6Network),
        ...(uplink6 !== undefined && v6Data !== undefined ? { publicIpv6: uplink6.publicIp, backendV6Data: v6Data } : {}),
      });
      o.log.info('lease acquired', { subnet: leaseName(own), publicIp: own.publicIp, backend: backend.type, preferred });
      const d = new Weftd(metrics, server, o, rtnl, uplink, uplink6, store, backend, own);
      await d.run();
      running = d;
      return d;
    } catch (e) {
      server?.close();
      await store.close();
      rtnl.close();
      throw e;
    }
  }

  /** This node's lease. */
  get lease(): Lease {
    return this.own;
  }

  private async run(): Promise<void> {
    const o = this.o;
    this.backend.attachMetrics?.(this.metrics);
    this.backend.ensureLocal(this.rtnl, this.own);
    this.writeSubnetFile();
    if (o.ipMasq) {
      ensureIpMasq(masqNetworks(this.store.netConf));
      // Re-applied now and then: another tool flushing the ruleset (iptables-nft restores, `nft
      // flush ruleset`) would otherwise leave pods NAT-less until a restart. One nft transaction.
      this.masqTimer = setInterval(() => this.ensureMasq(), IPMASQ_RESYNC_MS).unref();
    }
    this.ensureForward();
    // Re-checked now and then (over netlink; nft runs only to repair): Docker or an iptables-restore
    // may set the policy to drop or flush the chain after weftd started.
    if (o.forwardRules) this.forwardTimer = setInterval(() => this.ensureForward(), FORWARD_RESYNC_MS).unref();
    this.store.onLost(({ lost, current }) => {
      o.log.warn('own lease was lost and taken again', { lost: lost.subnet, current: current.subnet });
      this.touched?.add(lost);
      this.touched?.add(current);
      this.own = current;
      if (lost.subnet !== current.subnet || lost.ipv6Subnet !== current.ipv6Subnet) this.writeSubnetFile();
      this.loop?.trigger('own-lease');
    });
    this.timing = logPassTiming(o.log);
    this.loop = new ReconcileLoop((why) => this.pass(why), { debounceMs: o.debounceMs, periodMs: o.resyncMs, maxDuty: RESYNC_MAX_DUTY, onPass: this.timing.onPass });
    const { leases, revision } = await this.store.list();
    for (const l of leases) this.leases.set(leaseKey(l), l);
    const first = this.pass('start');
    if (first !== undefined) runToEnd(first);
    this.loop.start();
    this.watch = this.store.watch(revision, (ev) => {
      this.metrics.inc(M.leaseEvents, { type: ev.type });
      const key = leaseKey(ev.lease);
      const old = this.leases.get(key);
      if (old !== undefined) this.touched?.add(old);
      this.touched?.add(ev.lease);
      this.changes.note(key, ev.type === 'added' && !this.leases.has(key) ? 'new' : 'other');
      if (ev.type === 'added') this.leases.set(key, ev.lease);
      else this.leases.delete(key);
      o.log.debug('lease event', { type: ev.type, subnet: ev.lease.subnet, publicIp: ev.lease.publicIp });
      this.loop?.trigger('lease', 0);
    }, (err) => {
      this.metrics.inc(M.errors, { source: 'store' });
      o.log.warn('lease watch', { error: err });
    });
    this.events = RtnlEvents.open(['link', 'ipv4-route', ...(this.uplink6 !== undefined ? ['ipv6-route' as const] : []), 'neigh'], { ref: false });
    this.events.on((ev) => { if (isDrift(ev, this.store.netConf, this.dev, (l) => this.backend.watchesLink(l))) this.loop?.trigger(`netlink-${ev.type}`); });
    if (o.serviceProxy !== undefined) {
      const conf = this.store.netConf;
      const { startServiceProxy } = await import('./services/start.ts');
      const cache = await this.kubeCache(o.serviceProxy);
      this.services = await startServiceProxy(o.serviceProxy, [conf.network, conf.ipv6Network ?? ''].filter((n) => n !== ''), o.log, this.metrics, cache);
    }
    if (o.networkPolicy !== undefined) this.policy = await startPolicy(o, await this.kubeCache(o.networkPolicy), this.metrics, () => this.own, this.uplink, this.uplink6);
    o.log.info('weftd running', { subnet: leaseName(this.own), resyncMs: o.resyncMs, metrics: o.metricsAddr });
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
    const t0 = performance.now();
    this.metrics.inc(M.runs, { trigger: why.split(',')[0] ?? why });
    // What a full pass leaves alone: peers whose leases change, or that joins program, while it is suspended.
    const touched = new TouchedPeers();
    if (joined === undefined) this.touched = touched;
    else for (const l of joined) this.touched?.add(l);
    try {
      const dev = this.backend.ensureLocal(this.rtnl, this.own);
      this.dev = dev;
      this.backend.syncLeases?.([...this.leases.values()], this.own);
      const conf = this.store.netConf;
      const sums = { route: 0, neigh: 0, fdb: 0, conflicts: 0, failed: [] as Error[] };
      const leases = joined ?? [...this.leases.values()];
      for (const t of familyTargets(conf, this.own, this.uplink, this.uplink6)) {
        const base = { backend: this.backend.type, directRouting: conf.backend.directRouting, vni: conf.backend.vni };
        const applied = (op: Op) => {
          this.metrics.inc(M.changes, { op: op.kind });
          this.o.log.info('programmed', { change: describeOp(op), trigger: why });
        };
        const { desired, plan, out } = joined ? reconcileJoined(this.rtnl, t, base, joined, dev, applied) : yield* reconcileFamilySlices(this.rtnl, t, base, leases, dev, touched, applied);
        // A joined peer's route meeting one already there is no error: the full pass it triggers decides.
        const clash = (x: { op: Op; error: Error }) => joined !== undefined && x.op.kind === 'add-route' && isExists(x.error);
        if (out.failed.some(clash)) this.changes.requireFull();
        for (const x of out.failed) {
          if (clash(x)) continue;
          this.metrics.inc(M.errors, { source: 'apply' });
          this.o.log.warn('change failed', { change: describeOp(x.op), error: x.error });
        }
        for (const c of plan.conflicts) this.o.log.warn('route exists and is not ours: left alone', c);
        if (plan.adopted.length > 0) this.o.log.info('took over peer routes flanneld programmed (proto boot, exactly as the leases want them)', { routes: plan.adopted.map((a) => `${a.dst} via ${a.gw}`) });
        const failedAdds = (kind: Op['kind']) => out.failed.filter((x) => x.op.kind === kind).length;
        sums.route += desired.routes.length - plan.conflicts.length - failedAdds('add-route');
        sums.neigh += desired.neighs.length - failedAdds('add-neigh');
        sums.fdb += desired.fdbs.length - failedAdds('add-fdb');
        sums.conflicts += plan.conflicts.length;
        sums.failed.push(...out.failed.filter((x) => !clash(x)).map((x) => x.error));
      }
      const p = this.programmed;
      if (joined) {
        p.route += sums.route;
        p.neigh += sums.neigh;
        p.fdb += sums.fdb;
      } else {
        Object.assign(p, { route: sums.route, neigh: sums.neigh, fdb: sums.fdb });
        this.metrics.set(M.conflicts, sums.conflicts);
      }
      for (const kind of ['route', 'neigh', 'fdb'] as const) this.metrics.set(M.programmed, p[kind], { kind });
      this.metrics.set(M.leases, this.leases.size);
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
      this.metrics.inc(M.errors, { source: 'reconcile' });
      this.lastError = (e as Error).message;
      this.o.log.error('reconcile failed', { trigger: why, error: e });
    } finally {
      if (joined === undefined) this.touched = undefined;
    }
    this.metrics.set(M.lastReconcile, Date.now() / 1000);
    this.metrics.set(M.reconcileSeconds, (performance.now() - t0) / 1000);
  }

  private ensureMasq(): void {
    try {
      ensureIpMasq(masqNetworks(this.store.netConf));
    } catch (e) {
      this.metrics.inc(M.errors, { source: 'ip-masq' });
      this.o.log.warn('ip-masq rules could not be re-applied', { error: e });
    }
  }

  private ensureForward(): void {
    try {
      const { lines } = ensureForwardRules(masqNetworks(this.store.netConf), this.o.forwardRules);
      if (lines.length > 0) this.o.log.info(this.o.forwardRules ? 'forward accepts for the Network in chains with policy drop' : 'removed the forward accepts weftd had added', { changes: lines });
    } catch (e) {
      this.metrics.inc(M.errors, { source: 'forward-rules' });
      this.o.log.warn('forward accept rules could not be applied', { error: e });
    }
  }

  /**
   * The one watch cache every controller reads (one list and watch per collection): the kube lease
   * store's with --kube-subnet-mgr, else one opened for the controllers from their kube flags.
   */
  private async kubeCache(flags: KubeConnFlags): Promise<WatchCache> {
    if (this.store.kubeApi !== undefined) return this.store.kubeApi.cache;
    if (this.controllersKube === undefined) {
      const [{ openKubeApi }, { resolveKubeConn }] = await Promise.all([import('./kube/api.ts'), import('./kube/config.ts')]);
      this.controllersKube = openKubeApi(await resolveKubeConn(flags), { log: this.o.log });
    }
    return this.controllersKube.cache;
  }

  private health(): { ok: boolean; detail: string } {
    const p = this.policy?.controller.health();
    if (p !== undefined && !p.ok) return p;
    const age = Date.now() - this.lastOk;
    const ok = this.lastOk > 0 && age < Math.max(3 * this.o.resyncMs, 5000);
    return { ok, detail: ok ? `subnet ${leaseName(this.own)}, last clean pass ${age} ms ago` : `last clean pass ${age} ms ago: ${this.lastError}` };
  }

  private writeSubnetFile(): void {
    writeSubnetEnv(this.o.subnetFile, {
      network: this.store.netConf.network, leaseSubnet: this.own.subnet, mtu: this.backend.podMtu(), ipMasq: this.o.ipMasq,
      ...(this.store.netConf.ipv6Network !== undefined && this.own.ipv6Subnet !== undefined ? { ipv6Network: this.store.netConf.ipv6Network, ipv6LeaseSubnet: this.own.ipv6Subnet } : {}),
    });
    this.o.log.info('wrote subnet.env', { path: this.o.subnetFile, subnet: this.own.subnet, ipv6Subnet: this.own.ipv6Subnet, mtu: this.backend.podMtu() });
  }

  /** Stops watching and reconciling; the data plane, subnet.env and the lease stay as they are. */
  async stop(): Promise<void> {
    this.loop?.stop();
    this.timing?.stop();
    if (this.masqTimer !== undefined) clearInterval(this.masqTimer);
    if (this.forwardTimer !== undefined) clearInterval(this.forwardTimer);
    this.watch?.stop();
    this.policy?.stop();
    this.events?.close();
    this.server?.close();
    this.services?.stop();
    this.controllersKube?.close();
    this.backend.stop?.();
    await this.store.close();
    this.rtnl.close();
  }
}

/** Starts --network-policy (loaded only then): this node's addresses and pods follow the current lease. */
async function startPolicy(o: WeftdOptions, cache: WatchCache, metrics: Metrics, own: () => Lease, uplink: Uplink, uplink6: UplinkV6 | undefined): Promise<NetworkPolicyHandle> {
  const { startNetworkPolicy } = await import('./policy/start.ts');
  const v6 = () => ({ ...(own().ipv6Subnet !== undefined ? { subnet: own().ipv6Subnet } : {}), ...(uplink6 !== undefined ? { publicIp: uplink6.publicIp } : {}) });
  return startNetworkPolicy({ cache, log: o.log, metrics, nodeAddrs: () => policyNodeAddrs(own().subnet, uplink.publicIp, v6()), isLocal: (p) => policyIsLocal(p, own().subnet, uplink.publicIp, v6()), viewFile: policyViewPath(o.subnetFile) });
}

// The weftd daemon: takes this node's lease, keeps the backend device, subnet.env and ip-masq in
// place, and converges the node's netns (the one it runs in) to the lease table on every lease
// event, on relevant netlink events and periodically. Stopping leaves the data plane and the lease.
import type { Server } from 'node:http';
import { ensureIpMasq, masqNetworks } from './ip-masq.ts';
import { ensureForwardRules, FORWARD_RESYNC_MS } from './forward-rules.ts';
import { type Rtnl, RtnlEvents } from '../lib/netlink/index.ts';
import { M } from './agent-metrics.ts';
import type { Backend, UplinkV6 } from './backend/index.ts';
import type { StoreFlags } from './lease/open-store.ts';
import { type Lease, type LeaseStore, type Watch, leaseName } from './lease/store.ts';
import type { AgentLog } from './log.ts';
import type { Metrics } from './metrics.ts';
import { PeerPasses } from './peer-passes.ts';
import { writeSubnetEnv } from '../lib/flannel/subnet-env.ts';
import type { Uplink, UplinkQuery } from './uplink.ts';
import type { ServiceProxyFlags } from './services/flags.ts';
import { WeftdControllers } from './weftd-controllers.ts';
import { openWeftd, type OpenedWeftd } from './weftd-open.ts';

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
  readonly metrics: Metrics;
  private readonly server: Server | undefined;
  private readonly rtnl: Rtnl;
  private readonly uplink: Uplink;
  private readonly uplink6: UplinkV6 | undefined;
  private readonly store: LeaseStore;
  private readonly backend: Backend;
  private own: Lease;
  private readonly passes: PeerPasses;
  private readonly controllers: WeftdControllers;
  private events: RtnlEvents | undefined;
  private watch: Watch | undefined;
  private masqTimer: NodeJS.Timeout | undefined;
  private forwardTimer: NodeJS.Timeout | undefined;

  private constructor(private readonly o: WeftdOptions, p: OpenedWeftd) {
    ({ metrics: this.metrics, server: this.server, rtnl: this.rtnl, uplink: this.uplink, uplink6: this.uplink6, store: this.store, backend: this.backend, own: this.own } = p);
    this.passes = new PeerPasses({ ...p, log: o.log, own: () => this.own, resyncMs: o.resyncMs, debounceMs: o.debounceMs });
    this.controllers = new WeftdControllers(o, p.store);
  }

  /** Starts weftd in the calling thread's netns; resolves once the lease is held and the first pass ran. */
  static async start(o: WeftdOptions): Promise<Weftd> {
    let running: Weftd | undefined;
    const p = await openWeftd(o, () => running?.health() ?? { ok: false, detail: 'starting: no lease yet' });
    try {
      const d = new Weftd(o, p);
      await d.run();
      running = d;
      return d;
    } catch (e) {
      p.server?.close();
      await p.store.close();
      p.rtnl.close();
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
      this.passes.touch(lost);
      this.passes.touch(current);
      this.own = current;
      if (lost.subnet !== current.subnet || lost.ipv6Subnet !== current.ipv6Subnet) this.writeSubnetFile();
      this.passes.trigger('own-lease');
    });
    const revision = await this.passes.start();
    this.watch = this.store.watch(revision, (ev) => this.passes.leaseEvent(ev), (err) => {
      this.metrics.inc(M.errors, { source: 'store' });
      o.log.warn('lease watch', { error: err });
    });
    this.events = RtnlEvents.open(['link', 'ipv4-route', ...(this.uplink6 !== undefined ? ['ipv6-route' as const] : []), 'neigh'], { ref: false });
    this.events.on((ev) => this.passes.netlinkEvent(ev));
    await this.controllers.start(this.metrics, () => this.own, this.uplink, this.uplink6);
    o.log.info('weftd running', { subnet: leaseName(this.own), resyncMs: o.resyncMs, metrics: o.metricsAddr });
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

  private health(): { ok: boolean; detail: string } {
    const p = this.controllers.unhealthy();
    if (p !== undefined) return p;
    const { lastOk, lastError } = this.passes;
    const age = Date.now() - lastOk;
    const ok = lastOk > 0 && age < Math.max(3 * this.o.resyncMs, 5000);
    return { ok, detail: ok ? `subnet ${leaseName(this.own)}, last clean pass ${age} ms ago` : `last clean pass ${age} ms ago: ${lastError}` };
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
    this.passes.stop();
    if (this.masqTimer !== undefined) clearInterval(this.masqTimer);
    if (this.forwardTimer !== undefined) clearInterval(this.forwardTimer);
    this.watch?.stop();
    this.controllers.stopPolicy();
    this.events?.close();
    this.server?.close();
    this.controllers.stopServices();
    this.backend.stop?.();
    await this.store.close();
    this.rtnl.close();
  }
}

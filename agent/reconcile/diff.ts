// Diff between the desired state and what the kernel holds (pure): the operations that converge
// them, touching only entries weftd owns (routes with RTPROT_WEFT; permanent neighbour/FDB entries
// on its own VTEP) and adopting a route flanneld made that is exactly the one a lease wants (so a
// node switched from flanneld keeps following its peers). Healthy entries produce no operation, so
// a restart never re-adds them.
import { canonicalCidr, cidrContains, parseCidr, parseIp, type Cidr } from '../../lib/ip/index.ts';
import type { Fdb, Neigh, Route } from '../../lib/netlink/index.ts';
import { RTPROT_WEFT, type DesiredState, type WantFdb, type WantNeigh, type WantRoute } from './desired.ts';

/** Kernel state read for one reconcile of one family (main-table routes; neighbours and FDB of that family's VTEP). */
export interface ActualState {
  routes: Route[];
  neighs: Neigh[];
  fdbs: Fdb[];
}

/** Resolved device indexes; vtep is absent for host-gw, vtep6 (flannel-v6.<VNI>) when IPv6 is off. */
export interface DevIndexes {
  uplink: number;
  vtep?: number;
  vtep6?: number;
}

/** The indexes one family's plan resolves `dev: 'vtep'` against: flannel.<VNI> for 4, flannel-v6.<VNI> for 6. */
export function familyDev(dev: DevIndexes, family: 4 | 6): DevIndexes {
  const vtep = family === 4 ? dev.vtep : dev.vtep6;
  return vtep === undefined ? { uplink: dev.uplink } : { uplink: dev.uplink, vtep };
}

/**
 * rtm_protocol of a route added without one (RTPROT_BOOT): what flanneld's netlink.RouteReplace
 * leaves on every peer route it programs, and also what a plain `ip route add` gets.
 */
export const RTPROT_BOOT = 3;

/**
 * One change to apply; `replace` means an entry exists with other values (ours) or, with `adopt`,
 * a foreign route equal to the wanted one that the replace takes over under RTPROT_WEFT.
 */
export type Op =
  | { kind: 'del-route'; route: Route }
  | { kind: 'del-fdb'; fdb: Fdb }
  | { kind: 'del-neigh'; neigh: Neigh }
  | { kind: 'add-neigh'; want: WantNeigh; replace: boolean }
  | { kind: 'add-fdb'; want: WantFdb; replace: boolean }
  | { kind: 'add-route'; want: WantRoute; replace: boolean; adopt?: true };

/** The diff: operations in a safe order (removals first, then per-kind adds neighbour, FDB, route) and conflicts left alone. */
export interface Plan {
  ops: Op[];
  /** Desired routes whose destination holds a route weftd did not create: never overwritten. */
  conflicts: Array<{ dst: string; protocol: number }>;
  /** Foreign routes taken over (flannel's, exactly as a lease wants them): each also an add-route with adopt. */
  adopted: Array<{ dst: string; gw: string; protocol: number }>;
  /** Desired entries already programmed correctly. */
  inPlace: number;
}

const ZERO_MAC = '00:00:00:00:00:00';

/**
 * Computes the plan that turns `actual` into `desired` within the cluster `network` (pure). The
 * network's family (Network or IPv6Network) is the family planned; `dev` is that family's (familyDev).
 */
export function planReconcile(desired: DesiredState, actual: ActualState, dev: DevIndexes, network: string): Plan {
  const parsed = parseCidr(network);
  if (parsed === null) throw new Error(`network ${network} is not an IP prefix`);
  const net = canonicalCidr(parsed);
  const family = net.addr.family;
  const plan: Plan = { ops: [], conflicts: [], adopted: [], inPlace: 0 };
  planRoutes(plan, desired.routes, actual.routes.filter((r) => r.family === family), dev);
  if (dev.vtep !== undefined) {
    planFdbs(plan, desired.fdbs, actual.fdbs.filter((f) => f.index === dev.vtep));
    planNeighs(plan, desired.neighs, actual.neighs.filter((n) => n.index === dev.vtep && n.family === family), net);
  }
  // Removals before additions; additions neighbour -> FDB -> route so the kernel never ARPs on the VTEP.
  const rank: Record<Op['kind'], number> = { 'del-route': 0, 'del-fdb': 1, 'del-neigh': 2, 'add-neigh': 3, 'add-fdb': 4, 'add-route': 5 };
  plan.ops.sort((a, b) => rank[a.kind] - rank[b.kind]);
  return plan;
}

function routeMatches(r: Route, w: WantRoute, oif: number | undefined): boolean {
  return r.gw === w.gw && r.oif === oif && r.onlink === w.onlink;
}

/**
 * A route without an explicit metric: IPv4 routes then carry no RTA_PRIORITY, IPv6 ones always
 * carry one, 1024 by default (IP6_RT_PRIO_USER, net/ipv6/route.c), ours included.
 */
function defaultMetric(r: Route): boolean {
  return r.priority === undefined || (r.family === 6 && r.priority === 1024);
}

function planRoutes(plan: Plan, want: readonly WantRoute[], have: readonly Route[], dev: DevIndexes): void {
  const main = have.filter((r) => r.table === 254);
  const byDst = new Map<string, Route[]>();
  for (const r of main) byDst.set(r.dst, [...(byDst.get(r.dst) ?? []), r]);
  const wanted = new Set<string>();
  for (const w of want) {
    wanted.add(w.dst);
    const oif = w.dev === 'vtep' ? dev.vtep : dev.uplink;
    const same = byDst.get(w.dst) ?? [];
    const ours = same.filter((r) => r.protocol === RTPROT_WEFT);
    const foreign = same.filter((r) => r.protocol !== RTPROT_WEFT && defaultMetric(r));
    if (ours.some((r) => routeMatches(r, w, oif))) { plan.inPlace++; continue; }
    if (ours.length === 0 && foreign.length > 0) {
      // flanneld's route for this very lease (same gateway, device, onlink; no metric): take it over,
      // else a departed or moved peer would keep it forever. Any other owner's route is left alone.
      const flannels = foreign.find((r) => r.protocol === RTPROT_BOOT && routeMatches(r, w, oif));
      if (flannels !== undefined && foreign.length === 1) {
        plan.adopted.push({ dst: w.dst, gw: w.gw, protocol: flannels.protocol });
        plan.ops.push({ kind: 'add-route', want: w, replace: true, adopt: true });
        continue;
      }
      plan.conflicts.push({ dst: w.dst, protocol: foreign[0]?.protocol ?? 0 });
      continue;
    }
    plan.ops.push({ kind: 'add-route', want: w, replace: ours.length > 0 });
  }
  for (const r of main) {
    if (r.protocol === RTPROT_WEFT && !wanted.has(r.dst)) plan.ops.push({ kind: 'del-route', route: r });
  }
}

function planFdbs(plan: Plan, want: readonly WantFdb[], have: readonly Fdb[]): void {
  const byMac = new Map(have.filter((f) => f.mac !== ZERO_MAC).map((f) => [f.mac, f] as const));
  const wanted = new Set<string>();
  for (const w of want) {
    wanted.add(w.mac);
    const f = byMac.get(w.mac);
    if (f && f.dst === w.dst && f.permanent) { plan.inPlace++; continue; }
    plan.ops.push({ kind: 'add-fdb', want: w, replace: f !== undefined });
  }
  // Only entries of the shape weftd writes (permanent, unicast MAC, a remote): the device is ours.
  for (const f of have) {
    if (f.mac === ZERO_MAC || !f.permanent || f.dst === undefined || wanted.has(f.mac)) continue;
    plan.ops.push({ kind: 'del-fdb', fdb: f });
  }
}

function planNeighs(plan: Plan, want: readonly WantNeigh[], have: readonly Neigh[], net: Cidr): void {
  const byIp = new Map(have.map((n) => [n.ip, n] as const));
  const wanted = new Set<string>();
  for (const w of want) {
    wanted.add(w.ip);
    const n = byIp.get(w.ip);
    if (n && n.permanent && n.mac === w.mac) { plan.inPlace++; continue; }
    plan.ops.push({ kind: 'add-neigh', want: w, replace: n !== undefined });
  }
  for (const n of have) {
    const ip = parseIp(n.ip);
    if (!n.permanent || wanted.has(n.ip) || ip === null || !cidrContains(net, ip)) continue;
    plan.ops.push({ kind: 'del-neigh', neigh: n });
  }
}

// Diff between the desired state and what the kernel holds (pure): the operations that converge
// them, touching only entries weftd owns (routes with RTPROT_WEFT; permanent neighbour/FDB entries
// on its own VTEP). Healthy entries produce no operation, so a restart never re-adds them.
import { containsIPv4, parseCidr4, parseIPv4, type Cidr4 } from '../../lib/ip/ipv4.ts';
import type { Fdb, Neigh, Route } from '../../lib/netlink/index.ts';
import { RTPROT_WEFT, type DesiredState, type WantFdb, type WantNeigh, type WantRoute } from './desired.ts';

/** Kernel state read for one reconcile (IPv4 main-table routes; neighbours and FDB of the VTEP). */
export interface ActualState {
  routes: Route[];
  neighs: Neigh[];
  fdbs: Fdb[];
}

/** Resolved device indexes; vtep is absent for host-gw. */
export interface DevIndexes {
  uplink: number;
  vtep?: number;
}

/** One change to apply; `replace` means an entry of ours exists with other values. */
export type Op =
  | { kind: 'del-route'; route: Route }
  | { kind: 'del-fdb'; fdb: Fdb }
  | { kind: 'del-neigh'; neigh: Neigh }
  | { kind: 'add-neigh'; want: WantNeigh; replace: boolean }
  | { kind: 'add-fdb'; want: WantFdb; replace: boolean }
  | { kind: 'add-route'; want: WantRoute; replace: boolean };

/** The diff: operations in a safe order (removals first, then per-kind adds neighbour, FDB, route) and conflicts left alone. */
export interface Plan {
  ops: Op[];
  /** Desired routes whose destination holds a route weftd did not create: never overwritten. */
  conflicts: Array<{ dst: string; protocol: number }>;
  /** Desired entries already programmed correctly. */
  inPlace: number;
}

const ZERO_MAC = '00:00:00:00:00:00';

/** Computes the plan that turns `actual` into `desired` within the cluster `network` (pure). */
export function planReconcile(desired: DesiredState, actual: ActualState, dev: DevIndexes, network: string): Plan {
  const net = parseCidr4(network);
  if (net === null) throw new Error(`network ${network} is not an IPv4 prefix`);
  const plan: Plan = { ops: [], conflicts: [], inPlace: 0 };
  planRoutes(plan, desired.routes, actual.routes, dev);
  if (dev.vtep !== undefined) {
    planFdbs(plan, desired.fdbs, actual.fdbs.filter((f) => f.index === dev.vtep));
    planNeighs(plan, desired.neighs, actual.neighs.filter((n) => n.index === dev.vtep && n.family === 4), net);
  }
  // Removals before additions; additions neighbour -> FDB -> route so the kernel never ARPs on the VTEP.
  const rank: Record<Op['kind'], number> = { 'del-route': 0, 'del-fdb': 1, 'del-neigh': 2, 'add-neigh': 3, 'add-fdb': 4, 'add-route': 5 };
  plan.ops.sort((a, b) => rank[a.kind] - rank[b.kind]);
  return plan;
}

function routeMatches(r: Route, w: WantRoute, oif: number | undefined): boolean {
  return r.gw === w.gw && r.oif === oif && r.onlink === w.onlink;
}

function planRoutes(plan: Plan, want: readonly WantRoute[], have: readonly Route[], dev: DevIndexes): void {
  const main = have.filter((r) => r.family === 4 && r.table === 254);
  const byDst = new Map<string, Route[]>();
  for (const r of main) byDst.set(r.dst, [...(byDst.get(r.dst) ?? []), r]);
  const wanted = new Set<string>();
  for (const w of want) {
    wanted.add(w.dst);
    const oif = w.dev === 'vtep' ? dev.vtep : dev.uplink;
    const same = byDst.get(w.dst) ?? [];
    const ours = same.filter((r) => r.protocol === RTPROT_WEFT);
    const foreign = same.filter((r) => r.protocol !== RTPROT_WEFT && r.priority === undefined);
    if (ours.some((r) => routeMatches(r, w, oif))) { plan.inPlace++; continue; }
    if (ours.length === 0 && foreign.length > 0) {
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

function planNeighs(plan: Plan, want: readonly WantNeigh[], have: readonly Neigh[], net: Cidr4): void {
  const byIp = new Map(have.map((n) => [n.ip, n] as const));
  const wanted = new Set<string>();
  for (const w of want) {
    wanted.add(w.ip);
    const n = byIp.get(w.ip);
    if (n && n.permanent && n.mac === w.mac) { plan.inPlace++; continue; }
    plan.ops.push({ kind: 'add-neigh', want: w, replace: n !== undefined });
  }
  for (const n of have) {
    const ip = parseIPv4(n.ip);
    if (!n.permanent || wanted.has(n.ip) || ip === null || !containsIPv4(net, ip)) continue;
    plan.ops.push({ kind: 'del-neigh', neigh: n });
  }
}

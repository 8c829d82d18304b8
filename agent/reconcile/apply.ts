// The I/O half of a reconcile, in the node's netns (the Rtnl socket's): read the kernel state the
// diff needs, then apply a plan operation by operation. A failing operation is reported and the
// rest still run; the next reconcile retries whatever is still missing.
import { isNotFound, type Rtnl } from '../../lib/netlink/index.ts';
import { RTPROT_WEFT } from './desired.ts';
import type { ActualState, DevIndexes, Op, Plan } from './diff.ts';
import { runToEnd } from './loop.ts';

/** Reads one family's main-table routes and, when `dev` has a VTEP (familyDev), its neighbours and FDB. */
export function readActual(rtnl: Rtnl, dev: DevIndexes, family: 4 | 6 = 4): ActualState {
  return runToEnd(readActualSlices(rtnl, dev, family));
}

/**
 * readActual in slices (a generator): each dump is one slice, so a caller yielding between them
 * hands the event loop back after the routes and after the neighbours (each 40-80 ms at 5,000 peers).
 */
export function* readActualSlices(rtnl: Rtnl, dev: DevIndexes, family: 4 | 6 = 4): Generator<void, ActualState, undefined> {
  const routes = rtnl.listRoutes({ family, table: 254 });
  if (dev.vtep === undefined) return { routes, neighs: [], fdbs: [] };
  yield;
  const neighs = rtnl.listNeigh({ family, index: dev.vtep });
  yield;
  return { routes, neighs, fdbs: rtnl.listFdb({ index: dev.vtep }) };
}

/** What applying a plan did. */
export interface ApplyOutcome {
  applied: Op[];
  failed: Array<{ op: Op; error: Error }>;
}

/**
 * How long one slice of applyPlanSlices runs before it yields (ms): a join arriving while a full
 * pass programs thousands of peers (a cold start, a batch of Nodes) waits about that long, not for
 * the whole plan. A count of operations would not do: on a busy machine, or with a large routing
 * table, one netlink request takes from 20 us to over 1 ms.
 */
export const APPLY_SLICE_MS = 10;

/** What applyPlanSlices asks and tells per operation. */
export interface ApplyHooks {
  /** Asked just before each operation: true leaves it out (it became another pass's business while this one was suspended). */
  skip?: (op: Op) => boolean;
  /** Told after each operation that took effect (logging and metrics, spread over the slices with the work). */
  applied?: (op: Op) => void;
}

/** Applies `plan` in order with `dev` of the plan's family (familyDev); deletions that find nothing count as done. */
export function applyPlan(rtnl: Rtnl, plan: Plan, dev: DevIndexes, hooks: ApplyHooks = {}): ApplyOutcome {
  return runToEnd(applyPlanSlices(rtnl, plan, dev, hooks));
}

/** applyPlan in slices of about `sliceMs` each (a generator), with `hooks` asked and told per operation. */
export function* applyPlanSlices(rtnl: Rtnl, plan: Plan, dev: DevIndexes, hooks: ApplyHooks = {}, sliceMs = APPLY_SLICE_MS): Generator<void, ApplyOutcome, undefined> {
  const out: ApplyOutcome = { applied: [], failed: [] };
  let t0 = performance.now();
  for (const op of plan.ops) {
    if (performance.now() - t0 >= sliceMs) {
      yield;
      t0 = performance.now();
    }
    if (hooks.skip?.(op) === true) continue;
    try {
      applyOp(rtnl, op, dev);
      out.applied.push(op);
      hooks.applied?.(op);
    } catch (e) {
      if (op.kind.startsWith('del-') && isNotFound(e)) { out.applied.push(op); hooks.applied?.(op); continue; }
      out.failed.push({ op, error: e instanceof Error ? e : new Error(String(e)) });
    }
  }
  return out;
}

function vtepIndex(dev: DevIndexes): number {
  if (dev.vtep === undefined) throw new Error('no VTEP device');
  return dev.vtep;
}

function applyOp(rtnl: Rtnl, op: Op, dev: DevIndexes): void {
  switch (op.kind) {
    case 'del-route': {
      const r = op.route;
      rtnl.delRoute({ dst: r.dst, protocol: RTPROT_WEFT, table: r.table, ...(r.gw !== undefined ? { gw: r.gw } : {}), ...(r.oif !== undefined ? { oif: r.oif } : {}) });
      return;
    }
    case 'del-fdb':
      rtnl.delFdb({ index: op.fdb.index, mac: op.fdb.mac, ...(op.fdb.dst !== undefined ? { dst: op.fdb.dst } : {}) });
      return;
    case 'del-neigh':
      rtnl.delNeigh({ index: op.neigh.index, ip: op.neigh.ip });
      return;
    case 'add-neigh':
      // Replace is safe on our own device and makes a racing re-add harmless.
      rtnl.addNeigh({ index: vtepIndex(dev), ip: op.want.ip, mac: op.want.mac, permanent: true, replace: true });
      return;
    case 'add-fdb':
      rtnl.addFdb({ index: vtepIndex(dev), mac: op.want.mac, dst: op.want.dst, permanent: true, replace: true });
      return;
    case 'add-route': {
      const oif = op.want.dev === 'vtep' ? vtepIndex(dev) : dev.uplink;
      rtnl.addRoute({ dst: op.want.dst, gw: op.want.gw, oif, onlink: op.want.onlink, protocol: RTPROT_WEFT, replace: op.replace });
      return;
    }
  }
}

/** A short human form of an operation for logs. */
export function describeOp(op: Op): string {
  switch (op.kind) {
    case 'del-route': return `del route ${op.route.dst} via ${op.route.gw ?? '-'}`;
    case 'del-fdb': return `del fdb ${op.fdb.mac} dst ${op.fdb.dst ?? '-'}`;
    case 'del-neigh': return `del neigh ${op.neigh.ip}`;
    case 'add-neigh': return `add neigh ${op.want.ip} lladdr ${op.want.mac}`;
    case 'add-fdb': return `add fdb ${op.want.mac} dst ${op.want.dst}`;
    case 'add-route': return `${op.adopt === true ? 'adopt' : 'add'} route ${op.want.dst} via ${op.want.gw} dev ${op.want.dev}${op.want.onlink ? ' onlink' : ''}`;
  }
}

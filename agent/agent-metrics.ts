// The metrics weftd exports: leases, programmed entries, reconcile runs and errors, and the process's own (process-metrics.ts).
import { Metrics } from './metrics.ts';
import { defineProcessMetrics } from './process-metrics.ts';

/** Metric names, so the daemon and tests agree. */
export const M = {
  leases: 'weftd_leases',
  programmed: 'weftd_programmed_entries',
  runs: 'weftd_reconcile_runs_total',
  changes: 'weftd_reconcile_changes_total',
  errors: 'weftd_errors_total',
  conflicts: 'weftd_route_conflicts',
  leaseEvents: 'weftd_lease_events_total',
  lastReconcile: 'weftd_last_reconcile_timestamp_seconds',
  reconcileSeconds: 'weftd_last_reconcile_duration_seconds',
} as const;

/** A registry with every weftd metric declared. */
export function createAgentMetrics(): Metrics {
  const m = new Metrics();
  m.define(M.leases, 'gauge', 'Leases in the cluster lease table, this node included.');
  m.define(M.programmed, 'gauge', 'Data-plane entries weftd has in place, by kind (route, neigh, fdb).');
  m.define(M.runs, 'counter', 'Reconcile passes, by trigger.');
  m.define(M.changes, 'counter', 'Kernel changes made by reconcile passes, by operation.');
  m.define(M.errors, 'counter', 'Errors, by source (reconcile, apply, store).');
  m.define(M.conflicts, 'gauge', 'Desired routes blocked by a route weftd did not create.');
  m.define(M.leaseEvents, 'counter', 'Lease table events received, by type.');
  m.define(M.lastReconcile, 'gauge', 'Unix time of the last completed reconcile pass.');
  m.define(M.reconcileSeconds, 'gauge', 'Duration of the last reconcile pass.');
  defineProcessMetrics(m);
  return m;
}

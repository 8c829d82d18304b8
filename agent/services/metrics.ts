// The Service proxy's metrics on weftd's registry: programmed Services/endpoints, transaction
// failures, and the change -> programmed latency as a Prometheus histogram (_bucket/_sum/_count).
import type { Metrics } from '../metrics.ts';

/** Metric names, so the proxy, tests and docs agree. */
export const SM = {
  services: 'weftd_services_programmed',
  units: 'weftd_service_ports_programmed',
  endpoints: 'weftd_service_endpoints_programmed',
  syncs: 'weftd_service_syncs_total',
  failures: 'weftd_service_transaction_failures_total',
  latencyBucket: 'weftd_service_sync_latency_seconds_bucket',
  latencySum: 'weftd_service_sync_latency_seconds_sum',
  latencyCount: 'weftd_service_sync_latency_seconds_count',
  lastSync: 'weftd_service_last_sync_duration_seconds',
} as const;

/** Histogram bounds (seconds): a change is programmed in milliseconds, kube-proxy's minSyncPeriod is 1 s. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Declares the Service proxy's metrics on `m` (idempotent). */
export function defineServiceMetrics(m: Metrics): void {
  m.define(SM.services, 'gauge', 'Services with at least one port programmed in table inet weft-svc.');
  m.define(SM.units, 'gauge', 'Service ports (per family) programmed.');
  m.define(SM.endpoints, 'gauge', 'Endpoints (address, port) programmed across Service ports.');
  m.define(SM.syncs, 'counter', 'Service table transactions applied, by kind (full, incremental).');
  m.define(SM.failures, 'counter', 'Service table transactions the kernel refused or nft failed.');
  // Kept as counters per bucket: metrics.ts has no histogram type; the names and le labels are Prometheus' histogram layout.
  m.define(SM.latencyBucket, 'counter', 'Time from an EndpointSlice or Service change seen to it programmed, cumulative buckets (le).');
  m.define(SM.latencySum, 'counter', 'Sum of change -> programmed latencies, seconds.');
  m.define(SM.latencyCount, 'counter', 'Number of change -> programmed latencies observed.');
  m.define(SM.lastSync, 'gauge', 'Duration of the last Service table sync (render, diff, nft transaction).');
}

/** Records one change -> programmed latency. */
export function observeLatency(m: Metrics, seconds: number): void {
  for (const le of LATENCY_BUCKETS) if (seconds <= le) m.inc(SM.latencyBucket, { le: String(le) });
  m.inc(SM.latencyBucket, { le: '+Inf' });
  m.inc(SM.latencySum, {}, seconds);
  m.inc(SM.latencyCount);
}

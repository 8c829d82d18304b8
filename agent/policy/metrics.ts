// The NetworkPolicy controller's metrics (agent/metrics.ts registry), and reading the per-policy drop
// counters back from the kernel (nft counters the pol-drop-* chains count into) at scrape time.
import type { NftRunOptions, NftTableRef } from '../../lib/netfilter/types.ts';
import type { Metrics } from '../metrics.ts';
import { COUNTER_DROP_EG, COUNTER_DROP_IN, type DesiredPolicy, type PolicyPlan } from './desired.ts';
import { listTableAsync } from './list-async.ts';

/** Metric names. */
export const PM = {
  policies: 'weftd_network_policies',
  selected: 'weftd_network_policy_pods_selected',
  rules: 'weftd_network_policy_rules',
  elements: 'weftd_network_policy_set_elements',
  passes: 'weftd_network_policy_passes_total',
  applies: 'weftd_network_policy_applies_total',
  errors: 'weftd_network_policy_errors_total',
  applySeconds: 'weftd_network_policy_last_apply_seconds',
  drops: 'weftd_network_policy_drops_total',
} as const;

/** Declares the controller's metrics on `m`. */
export function definePolicyMetrics(m: Metrics): void {
  m.define(PM.policies, 'gauge', 'NetworkPolicies in the cluster.');
  m.define(PM.selected, 'gauge', 'Pods of this node isolated by some policy, by direction (ingress, egress).');
  m.define(PM.rules, 'gauge', 'Rules in the weft-policy table (O(policies), not O(pods)).');
  m.define(PM.elements, 'gauge', 'Set elements in the weft-policy table.');
  m.define(PM.passes, 'counter', 'Policy passes, by result (applied, unchanged, failed).');
  m.define(PM.applies, 'counter', 'Changes written to the kernel, by transport (netlink: set elements only, in-process; nft: an nft -f transaction).');
  m.define(PM.errors, 'counter', 'Policy errors, by source (apply, list, view, model).');
  m.define(PM.applySeconds, 'gauge', 'Duration of the last policy pass (model, diff and nft transaction).');
  m.define(PM.drops, 'counter', 'Packets dropped to pods a policy selects, by policy (namespace/name) and direction; all: every drop. Read in the background: as of the previous scrape.');
}

/** The gauges and counters of one successful pass that produced `d`. */
export function setPassMetrics(m: Metrics, d: DesiredPolicy, policies: number, via: 'none' | 'netlink' | 'nft'): void {
  m.set(PM.policies, policies);
  m.set(PM.selected, d.isolated.ingress, { direction: 'ingress' });
  m.set(PM.selected, d.isolated.egress, { direction: 'egress' });
  m.set(PM.rules, d.rules);
  m.set(PM.elements, [...d.content.sets.values()].reduce((n, s) => n + s.elements.size, 0));
  m.inc(PM.passes, { result: via === 'none' ? 'unchanged' : 'applied' });
  if (via !== 'none') m.inc(PM.applies, { via });
}

/** Drop counters (a counters listing): the named counters of each policy's plan, and the totals (policy `all`). */
export function readDropCounters(c: ReadonlyMap<string, { readonly packets: number }>, plans: readonly PolicyPlan[]): { policy: string; direction: 'ingress' | 'egress'; packets: number }[] {
  const out: { policy: string; direction: 'ingress' | 'egress'; packets: number }[] = [];
  const put = (name: string | undefined, policy: string, direction: 'ingress' | 'egress'): void => {
    const got = name === undefined ? undefined : c.get(name);
    if (got !== undefined) out.push({ policy, direction, packets: got.packets });
  };
  for (const p of plans) {
    put(p.ingressCounter, p.key, 'ingress');
    put(p.egressCounter, p.key, 'egress');
  }
  put(COUNTER_DROP_IN, 'all', 'ingress');
  put(COUNTER_DROP_EG, 'all', 'egress');
  return out;
}

/** Counters older than this are read again at a scrape (ms). */
const DROPS_MAX_AGE_MS = 1000;

/**
 * The drop counters for scrapes without nft in the scrape: a scrape reports the last values read and
 * starts a read in a child process (listTableAsync) for the next one, so a scrape never holds a
 * policy pass. The first read starts with the controller.
 */
export class DropCounterReader {
  private counters: ReadonlyMap<string, { readonly packets: number }> = new Map();
  private readAt = -Infinity;
  private reading = false;

  constructor(private readonly table: NftTableRef, private readonly opts: NftRunOptions, private readonly onError: (e: unknown) => void) {}

  /** Starts a read unless one runs; resolves when it ended (tests). */
  refresh(): Promise<void> {
    if (this.reading) return Promise.resolve();
    this.reading = true;
    return listTableAsync(this.table, this.opts, 'counters').then((s) => {
      this.counters = s?.counters ?? new Map();
      this.readAt = performance.now();
    }, (e: unknown) => this.onError(e)).finally(() => { this.reading = false; });
  }

  /** Sets the drops metric from the last read; reads again in the background when it is old. */
  collect(m: Metrics, plans: readonly PolicyPlan[]): void {
    m.clear(PM.drops);
    for (const d of readDropCounters(this.counters, plans)) m.set(PM.drops, d.packets, { policy: d.policy, direction: d.direction });
    if (performance.now() - this.readAt > DROPS_MAX_AGE_MS) void this.refresh();
  }
}

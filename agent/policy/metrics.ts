// The NetworkPolicy controller's metrics (agent/metrics.ts registry), and reading the per-policy drop
// counters back from the kernel (nft counters the pol-drop-* chains count into) at scrape time.
import type { Metrics } from '../metrics.ts';
import { COUNTER_DROP_EG, COUNTER_DROP_IN, type PolicyPlan } from './desired.ts';

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
  m.define(PM.drops, 'counter', 'Packets dropped to pods a policy selects, by policy (namespace/name) and direction; all: every drop.');
}

/** Drop counters (listCounters): the named counters of each policy's plan, and the totals (policy `all`). */
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

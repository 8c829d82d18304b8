// The NetworkPolicy controller's metrics (agent/metrics.ts registry), and reading the per-policy drop
// counters back from the kernel (nft counters in the pol-drop-* chains) at scrape time.
import type { Metrics } from '../metrics.ts';
import type { NftTableState } from '../../lib/netfilter/types.ts';
import { CHAIN_DROP_EG, CHAIN_DROP_IN } from './desired.ts';

/** Metric names. */
export const PM = {
  policies: 'weftd_network_policies',
  selected: 'weftd_network_policy_pods_selected',
  rules: 'weftd_network_policy_rules',
  elements: 'weftd_network_policy_set_elements',
  passes: 'weftd_network_policy_passes_total',
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
  m.define(PM.errors, 'counter', 'Policy errors, by source (apply, list).');
  m.define(PM.applySeconds, 'gauge', 'Duration of the last policy pass (model, diff and nft transaction).');
  m.define(PM.drops, 'counter', 'Packets dropped to pods a policy selects, by policy (namespace/name) and direction; all: every drop.');
}

/** Drop counters of a listing: `drop <ns/name> <hash>` rules carry a counter; the last rule counts every drop. */
export function readDropCounters(state: NftTableState | null): { policy: string; direction: 'ingress' | 'egress'; packets: number }[] {
  const out: { policy: string; direction: 'ingress' | 'egress'; packets: number }[] = [];
  for (const [chain, direction] of [[CHAIN_DROP_IN, 'ingress'], [CHAIN_DROP_EG, 'egress']] as const) {
    for (const r of state?.chains.get(chain)?.rules ?? []) {
      const m = /^drop (?:(\S+) )?[0-9a-f]{10}$/.exec(r.comment ?? '');
      if (m === null) continue;
      const counter = r.expr.map((e) => (e as { counter?: { packets?: number } }).counter).find((c) => c !== undefined);
      out.push({ policy: m[1] ?? 'all', direction, packets: counter?.packets ?? 0 });
    }
  }
  return out;
}

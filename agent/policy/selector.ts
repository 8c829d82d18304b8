// Label selector matching (metav1.LabelSelector: matchLabels AND every matchExpression) and a
// canonical text of a selector, so that equal selectors share one nftables set. Pure.
import type { LabelSelector } from './types.ts';

/** True when `labels` satisfy `sel`; an empty selector matches everything. Unknown operators match nothing. */
export function matchesSelector(sel: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(labels[e.key] ?? '')) return false;
        break;
      case 'NotIn':
        // As Kubernetes' labels.Selector: a missing key satisfies NotIn.
        if (has && values.includes(labels[e.key] ?? '')) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** Canonical text of a selector: key order, duplicate expressions and value order do not matter. */
export function selectorKey(sel: LabelSelector): string {
  const labels = Object.entries(sel.matchLabels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}=${v}`);
  const exprs = [...new Set((sel.matchExpressions ?? []).map((e) => `${e.key} ${e.operator} ${[...new Set(e.values ?? [])].sort().join(',')}`))].sort();
  return `{${[...labels, ...exprs].join(';')}}`;
}

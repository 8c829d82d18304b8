// CHECK: the rule set is in place and every mapping of prevResult + runtimeConfig has its elements.
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { listTable } from '../../lib/netfilter/list.ts';
import { WEFT_TABLE } from '../../lib/netfilter/table.ts';
import type { NftRunOptions, NftTableState } from '../../lib/netfilter/types.ts';
import { requirePrevResult } from './add.ts';
import { findElement, sameAtoms } from './conflict.ts';
import { parsePortmapConfig } from './config.ts';
import { checkFailed } from './errors.ts';
import { elementComment, isDnatMap } from './names.ts';
import { containerIps, planElements, type PlannedElement } from './plan.ts';
import { portmapRules } from './ruleset.ts';

/** What is wrong with the listed table for these planned elements; empty when healthy. Pure. */
export function findProblems(state: NftTableState | null, planned: readonly PlannedElement[], comment: string): string[] {
  if (state === null) return ['table inet weft is missing'];
  const problems: string[] = [];
  const want = new Map<string, number>();
  for (const r of portmapRules()) want.set(r.chain, (want.get(r.chain) ?? 0) + 1);
  for (const [chain, n] of want) {
    const have = state.chains.get(chain)?.rules.length;
    if (have === undefined) problems.push(`chain ${chain} is missing`);
    else if (have < n) problems.push(`chain ${chain} has ${have} of its ${n} rules`);
  }
  for (const p of planned) {
    const e = findElement(state, p.set, p.key);
    const what = `${p.set} { ${p.key.join(' . ')} }`;
    if (e === undefined) problems.push(`${what} is missing`);
    else if (isDnatMap(p.set) && !sameAtoms(e.data, p.data)) {
      problems.push(`${what} maps to ${(e.data ?? []).join(' . ')} (owner ${e.comment ?? '?'}), expected ${(p.data ?? []).join(' . ')}`);
    } else if (e.comment !== undefined && e.comment !== comment && isDnatMap(p.set)) {
      problems.push(`${what} belongs to ${e.comment}`);
    }
  }
  return problems;
}

/** CHECK, in the node netns: code 121 naming what is missing or wrong. */
export function cmdCheck(a: CmdArgs, opts: NftRunOptions = {}): void {
  const cfg = parsePortmapConfig(a);
  const prev = requirePrevResult(a);
  if (cfg.mappings.length === 0) return;
  const planned = planElements(cfg, containerIps(prev));
  const problems = findProblems(listTable(WEFT_TABLE, opts), planned, elementComment(cfg.name, a.containerId, a.ifName));
  if (problems.length > 0) throw checkFailed('portmap: CHECK failed', problems.join('; '));
}

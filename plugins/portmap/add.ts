// ADD: named steps; the only kernel change is one nft transaction, so a refused ADD changes nothing.
import { invalidConfig } from '../../lib/cni/errors.ts';
import { log } from '../../lib/cni/log.ts';
import { Rollback } from '../../lib/cni/rollback.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import type { Result } from '../../lib/cni/types.ts';
import { NftBatch } from '../../lib/netfilter/batch.ts';
import { NftError } from '../../lib/netfilter/errors.ts';
import { WEFT_TABLE } from '../../lib/netfilter/table.ts';
import type { NftRunOptions } from '../../lib/netfilter/types.ts';
import { diagnoseClashes, formatClashes, type Clash } from './conflict.ts';
import { parsePortmapConfig } from './config.ts';
import { portConflict } from './errors.ts';
import { ensureRouteLocalnet } from './localnet.ts';
import { elementComment, PORTMAP_NAMES as N } from './names.ts';
import { containerIps, planElements, type PlannedElement } from './plan.ts';
import { ensurePortmapRuleset } from './ruleset.ts';

/** The chained plugin's input: portmap only ever runs after an interface plugin. */
export function requirePrevResult(a: CmdArgs): Result {
  if (a.prevResult === undefined) throw invalidConfig('portmap must be called as a chained plugin', 'prevResult is missing');
  return a.prevResult;
}

/** ADD, in the node netns: DNAT map entries (+ masquerade set entries) for every mapping; returns prevResult unchanged. */
export function cmdAdd(a: CmdArgs): Result {
  const cfg = parsePortmapConfig(a);
  const prev = requirePrevResult(a);
  if (cfg.mappings.length === 0) return prev; // nothing asked: touch nothing, not even the table
  const ips = containerIps(prev);
  const planned = planElements(cfg, ips);
  const comment = elementComment(cfg.name, a.containerId, a.ifName);
  return new Rollback().runSync((rb) => {
    addElements(planned, comment);
    rb.push('portmap elements', () => removeElements(planned));
    if (ips.v4 !== undefined && planned.some((p) => p.set === N.snat4 && p.key[0] === '127.0.0.1')) {
      const iface = ensureRouteLocalnet(prev, ips.v4);
      if (iface === undefined) log.warn('no route to the pod: 127.0.0.1 hostPorts will not work', { pod: ips.v4 });
    }
    return prev;
  });
}

/**
 * Adds the elements in ONE transaction together with the (idempotent) rule set. nft refuses a map key
 * already bound to other data (EEXIST, whole transaction rolled back), which is the atomic hostPort
 * conflict check. Clashes with this attachment's own stale entries (a re-ADD after the pod address
 * changed) are replaced; any other owner's is a code-120 error.
 */
export function addElements(planned: readonly PlannedElement[], comment: string, opts: NftRunOptions = {}): void {
  const batch = (replace: readonly Clash[]): NftBatch => {
    const b = ensurePortmapRuleset(new NftBatch(WEFT_TABLE));
    for (const c of replace) b.deleteElement(c.planned.set, c.planned.key, c.existing.data === undefined ? {} : { data: c.existing.data });
    for (const p of planned) b.addElement(p.set, p.key, p.data === undefined ? { comment } : { comment, data: p.data });
    return b;
  };
  try {
    batch([]).apply(opts);
  } catch (e) {
    if (!(e instanceof NftError) || !e.isExists) throw e;
    const clashes = diagnoseClashes(planned, opts);
    // No clash left: the other owner went away in between (or an overlap we cannot explain): one retry.
    if (clashes.length === 0) return void batch([]).apply(opts);
    if (clashes.some((c) => c.existing.comment !== comment)) {
      throw portConflict('portmap: hostPort already in use by another container', formatClashes(clashes.filter((c) => c.existing.comment !== comment)), e);
    }
    batch(clashes).apply(opts);
  }
}

/** Removes planned elements (each only if present; map entries only while they still hold our data). */
export function removeElements(planned: readonly PlannedElement[], opts: NftRunOptions = {}): void {
  const b = new NftBatch(WEFT_TABLE);
  for (const p of planned) b.deleteElement(p.set, p.key, p.data === undefined ? {} : { data: p.data });
  b.apply(opts);
}

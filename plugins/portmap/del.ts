// DEL: remove exactly this attachment's elements, found by comment (no netns or prevResult needed),
// then forget the UDP flows they carried. Forgiving: nothing there is success, a second DEL too.
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { NftBatch } from '../../lib/netfilter/batch.ts';
import { listTable } from '../../lib/netfilter/list.ts';
import { findSetElemsByComment } from '../../lib/netfilter/nfnl/set-elements.ts';
import { keptNfnlSocket } from '../../lib/netfilter/nfnl/socket.ts';
import { WEFT_TABLE } from '../../lib/netfilter/table.ts';
import type { NftAtom, NftRunOptions, NftTableState } from '../../lib/netfilter/types.ts';
import { findElement, sameAtoms } from './conflict.ts';
import { parsePortmapDelConfig, type PortmapConfig } from './config.ts';
import { flushUdpConntrack } from './conntrack.ts';
import { ELEMENT_SETS, elementComment, isDnatMap } from './names.ts';
import { containerIps, planElements, type PlannedElement } from './plan.ts';

/** An element selected for removal. */
export interface OwnedElement {
  set: string;
  key: readonly NftAtom[];
  data?: readonly NftAtom[];
}

/**
 * The elements `comment` owns in the listed table, plus the DNAT entries `planned` (from prevResult)
 * that still point at this pod even if an older attachment's comment is on them. Pure.
 */
export function findOwnedElements(state: NftTableState | null, comment: string, planned: readonly PlannedElement[] = []): OwnedElement[] {
  const out = selectElements(state, (c) => c === comment);
  for (const p of planned) {
    if (!isDnatMap(p.set)) continue;
    const e = findElement(state, p.set, p.key);
    if (e === undefined || !sameAtoms(e.data, p.data) || e.comment === comment) continue;
    out.push({ set: p.set, key: e.key, ...(e.data === undefined ? {} : { data: e.data }) });
  }
  return out;
}

/** The elements of portmap's sets and maps whose comment satisfies `pred` (never another concern's sets). Pure. */
export function selectElements(state: NftTableState | null, pred: (comment: string) => boolean): OwnedElement[] {
  const out: OwnedElement[] = [];
  for (const set of ELEMENT_SETS) {
    for (const e of state?.sets.get(set)?.elements ?? []) {
      if (e.comment !== undefined && pred(e.comment)) out.push(e.data === undefined ? { set, key: e.key } : { set, key: e.key, data: e.data });
    }
  }
  return out;
}

/** The pod addresses behind removed UDP DNAT entries (whose UDP flows DEL flushes). Pure. */
export function udpPodIpsOf(removed: readonly OwnedElement[]): string[] {
  const out = new Set<string>();
  for (const e of removed) {
    if (!isDnatMap(e.set) || e.data === undefined) continue;
    // Keys end in `proto . hostPort` (hostIP maps put the address first); data is `podIP . containerPort`.
    const podIp = e.data[0];
    if (e.key[e.key.length - 2] === 'udp' && typeof podIp === 'string') out.add(podIp);
  }
  return [...out];
}

/** DEL, in the node netns. Also works without CNI_NETNS and without prevResult. */
export function cmdDel(a: CmdArgs): void {
  const cfg = parsePortmapDelConfig(a);
  const comment = elementComment(cfg.name, a.containerId, a.ifName);
  const planned = plannedFromPrev(a, cfg);
  // Most pods map no port: a netlink look at portmap's sets (no process) says there is nothing to
  // remove, so the `nft -j list` listing below (a spawned nft, 10-30 ms) runs only for pods that have some.
  if (planned.length === 0 && !ownsAnyElement(comment)) return;
  const state = listTable(WEFT_TABLE);
  removeOwned(findOwnedElements(state, comment, planned));
}

/** True unless netlink shows that no set of portmap's holds an element with `comment` (node netns; any netlink failure: true). */
function ownsAnyElement(comment: string): boolean {
  try {
    const sock = keptNfnlSocket();
    return ELEMENT_SETS.some((set) => findSetElemsByComment(sock, WEFT_TABLE, set, comment).length > 0);
  } catch {
    return true;
  }
}

/**
 * Removes the given elements in one transaction (node netns, or netnsPath) and flushes the UDP
 * conntrack entries of removed UDP mappings. Nothing to do for an empty list.
 */
export function removeOwned(owned: readonly OwnedElement[], opts: NftRunOptions = {}): void {
  if (owned.length === 0) return;
  const b = new NftBatch(WEFT_TABLE);
  // With data, a map entry is removed only while it still maps to this pod (EEXIST otherwise).
  for (const e of owned) b.deleteElement(e.set, [...e.key], e.data === undefined ? {} : { data: [...e.data] });
  b.apply(opts);
  flushUdpConntrack(udpPodIpsOf(owned), opts.netnsPath === undefined ? {} : { netnsPath: opts.netnsPath });
}

// prevResult is optional on DEL; a plan that cannot be made (no address of a family) just adds nothing.
function plannedFromPrev(a: CmdArgs, cfg: PortmapConfig): PlannedElement[] {
  if (a.prevResult === undefined || cfg.mappings.length === 0) return [];
  try {
    return planElements(cfg, containerIps(a.prevResult));
  } catch {
    return [];
  }
}

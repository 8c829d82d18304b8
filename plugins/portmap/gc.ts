// GC (CNI 1.1): remove this network's elements whose attachment is not in cni.dev/valid-attachments,
// e.g. after a runtime lost a pod without DEL; a leaked DNAT entry would otherwise hold its hostPort forever.
import { invalidConfig } from '../../lib/cni/errors.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { listTable } from '../../lib/netfilter/list.ts';
import { WEFT_TABLE } from '../../lib/netfilter/table.ts';
import type { NftRunOptions, NftTableState } from '../../lib/netfilter/types.ts';
import { parsePortmapConfig, type Attachment } from './config.ts';
import { removeOwned, selectElements, type OwnedElement } from './del.ts';
import { elementComment, networkTag } from './names.ts';

/** Elements of `network` (by the comment's network tag) owned by none of `valid`. Pure. */
export function findStaleElements(state: NftTableState | null, network: string, valid: readonly Attachment[]): OwnedElement[] {
  const tag = networkTag(network);
  const keep = new Set(valid.map((v) => elementComment(network, v.containerId, v.ifName)));
  return selectElements(state, (c) => c.startsWith(tag) && !keep.has(c));
}

/** GC, in the node netns (or netnsPath): one listing, one transaction, UDP flows of removed mappings flushed. */
export function cmdGc(a: CmdArgs, opts: NftRunOptions = {}): void {
  const cfg = parsePortmapConfig(a);
  // Reading a missing list as "nothing is valid" would unmap every pod of the network.
  if (cfg.validAttachments === null) throw invalidConfig('invalid configuration: GC needs cni.dev/valid-attachments');
  removeOwned(findStaleElements(listTable(WEFT_TABLE, opts), cfg.name, cfg.validAttachments), opts);
}

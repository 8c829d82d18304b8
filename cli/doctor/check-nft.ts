// Check "nft": elements of weft's nftables sets and maps (masquerade, hostPort, firewall) whose
// comment names an attachment that holds no address and has no host veth: rules left by a pod
// that is gone. Comments are "<containerID>/<ifname>", optionally behind portmap's "<8 hex>:" tag.
import type { NftTableState } from '../../lib/netfilter/index.ts';
import { isLive, type LiveAttachments } from '../../lib/attach/bridge-veth.ts';
import type { Allocation } from './allocations.ts';
import type { CheckResult, Problem } from './problem.ts';

/** The attachment an element comment names, or null for hashed or foreign comments. */
export function commentAttachment(comment: string): { containerId: string; ifName: string } | null {
  const m = /^(?:[0-9a-f]{8}:)?([^/\s]+)\/([^/\s]+)$/.exec(comment);
  if (m === null || (m[1] as string).startsWith('h:')) return null;
  return { containerId: m[1] as string, ifName: m[2] as string };
}

/** Runs the check over one listed table (null: the table does not exist). */
export function checkNft(table: NftTableState | null, tableName: string, allocs: readonly Allocation[], live: LiveAttachments): CheckResult {
  const check = 'nft';
  const problems: Problem[] = [];
  if (table === null) return { check, problems, facts: { table: tableName, elements: 0 } };
  const held = new Set(allocs.map((a) => `${a.containerId}/${a.ifName}`));
  let elements = 0;
  for (const set of table.sets.values()) {
    for (const e of set.elements) {
      elements++;
      if (e.comment === undefined) continue;
      const who = commentAttachment(e.comment);
      if (who === null || held.has(`${who.containerId}/${who.ifName}`) || isLive(live, who.containerId, who.ifName)) continue;
      const key = e.key.map(String).join(' . ');
      problems.push({
        check,
        detail: `${set.kind} ${tableName} ${set.name} has element ${key} for ${who.containerId}/${who.ifName}, which has no address and no interface on this node`,
        fix: `let the runtime run CNI GC (it removes elements of attachments it no longer knows), or: nft delete element ${tableName} ${set.name} '{ ${key} }'`,
      });
    }
  }
  return { check, problems, facts: { table: tableName, elements } };
}

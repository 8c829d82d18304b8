// GC (CNI 1.1 "GC"), run in the node netns: frees every attachment of this network that is not in
// cni.dev/valid-attachments, so what an ADD killed mid-way left (and the runtime forgot) goes away:
// host veths on the network's bridge tagged with a weft alias, masquerade and macspoofchk elements by
// their comment, then the IPAM plugin's own GC with the same stdin.
import { delegateGc } from '../../lib/cni/delegate.ts';
import { invalidConfig } from '../../lib/cni/errors.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { isNotFound } from '../../lib/netlink/errors.ts';
import { Rtnl } from '../../lib/netlink/rtnl.ts';
import { NfnlElemBatch, listSetElems } from '../../lib/netfilter/nfnl/set-elements.ts';
import { keptNfnlSocket } from '../../lib/netfilter/nfnl/socket.ts';
import { WEFT_TABLE } from '../../lib/netfilter/table.ts';
import { parseBridgeConfig } from './config.ts';
import { gcMacSpoof } from './macspoof.ts';
import { attachmentAlias, elementComment, masqNames } from './names.ts';

const ALIAS_PREFIX = 'weft:';

/** The (containerID, ifname) pairs still in use; a GC without the key is refused (code 7), not read as "none". */
export function parseValidAttachments(config: unknown): Array<{ containerId: string; ifName: string }> {
  const list = (config as Record<string, unknown>)['cni.dev/valid-attachments'];
  if (!Array.isArray(list)) throw invalidConfig('invalid configuration: GC needs cni.dev/valid-attachments', `got ${typeof list}`);
  return list.map((v: unknown, i) => {
    const o = v as { containerID?: unknown; ifname?: unknown } | null;
    if (typeof o?.containerID !== 'string' || typeof o.ifname !== 'string') {
      throw invalidConfig('invalid configuration: cni.dev/valid-attachments', `entry ${i} needs string containerID and ifname`);
    }
    return { containerId: o.containerID, ifName: o.ifname };
  });
}

/**
 * Deletes weft-tagged veths whose alias names no valid attachment: those enslaved to `bridge`, and those
 * enslaved to nothing (an ADD killed between tagging and enslaving; a finished ADD always enslaves, so
 * such a veth belongs to no live attachment of any network). Returns how many.
 */
function gcVeths(bridge: string, keep: ReadonlySet<string>): number {
  const host = Rtnl.open();
  let n = 0;
  try {
    const br = host.getLink(bridge);
    for (const l of host.listLinks()) {
      const ours = l.master === undefined || (br !== null && l.master === br.index);
      if (l.kind !== 'veth' || !ours || l.alias?.startsWith(ALIAS_PREFIX) !== true || keep.has(l.alias)) continue;
      try {
        host.deleteLink(l.index); // the pod end goes with it, wherever it is
        n++;
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
  } finally {
    host.close();
  }
  return n;
}

/** Deletes the network's pod-set elements whose comment names no valid attachment (one transaction). */
function gcMasq(network: string, keep: ReadonlySet<string>): void {
  const sock = keptNfnlSocket();
  const n = masqNames(network);
  const b = new NfnlElemBatch(WEFT_TABLE);
  let any = false;
  for (const set of [n.pods4, n.pods6]) {
    const stale = (listSetElems(sock, WEFT_TABLE, set) ?? []).filter((e) => e.comment !== undefined && !keep.has(e.comment));
    if (stale.length === 0) continue;
    b.delete(set, stale);
    any = true;
  }
  if (any) b.commit(sock);
}

/** GC: veths, masquerade and macspoofchk elements, then IPAM (delegated with the same stdin and env). */
export async function cmdGc(a: CmdArgs): Promise<void> {
  const cfg = parseBridgeConfig(a);
  const valid = parseValidAttachments(a.config);
  gcVeths(cfg.bridge, new Set(valid.map((v) => attachmentAlias(v.containerId, v.ifName))));
  const comments = new Set(valid.map((v) => elementComment(v.containerId, v.ifName)));
  if (cfg.ipMasq) gcMasq(cfg.name, comments);
  // Whatever macspoofchk says now, elements of an ADD made while it was on must still go (absent sets cost
  // one dump each); with it off that is best effort, so a node without nf_tables can still GC.
  try {
    gcMacSpoof(cfg.name, (c) => !comments.has(c));
  } catch (e) {
    if (cfg.macSpoofChk) throw e;
  }
  if (cfg.ipam !== undefined) await delegateGc(cfg.ipam.type, a.stdinData, a.env);
}

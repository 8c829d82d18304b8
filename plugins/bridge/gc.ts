// GC (CNI 1.1 "GC"), run in the node netns: frees every attachment of this network that is not in
// cni.dev/valid-attachments, so what an ADD killed mid-way left (and the runtime forgot) goes away:
// host veths named after the network (or randomly named ones tagged with a weft alias), masquerade
// and macspoofchk elements by their comment, then the IPAM plugin's own GC with the same stdin.
import { delegateGc } from '../../lib/cni/delegate.ts';
import { invalidConfig } from '../../lib/cni/errors.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { isNotFound } from '../../lib/netlink/errors.ts';
import type { Link } from '../../lib/netlink/link.ts';
import { Rtnl } from '../../lib/netlink/rtnl.ts';
import { NfnlElemBatch, listSetElems } from '../../lib/netfilter/nfnl/set-elements.ts';
import { keptNfnlSocket } from '../../lib/netfilter/nfnl/socket.ts';
import { WEFT_TABLE } from '../../lib/netfilter/table.ts';
import { normalizeKeys } from '../../lib/cni/decode.ts';
import { validate } from '../../gen/validators/bridge.js';
import { parseBridgeConfig } from './config.ts';
import { gcMacSpoof } from './macspoof.ts';
import { attachmentAlias, isAttachmentAlias, isHostVethName, vethAttachmentPart, vethNetworkPrefix } from '../../lib/attach/bridge-veth.ts';
import { elementComment, masqNames } from './names.ts';

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

/** The valid attachments as GC matches them: host veth name parts and aliases. */
interface KeepVeths {
  parts: ReadonlySet<string>;
  aliases: ReadonlySet<string>;
}

/**
 * Which host veth GC of `network` (bridge `bridge`) deletes. By name: every veth named with the
 * network's prefix whose attachment part (and alias) is not valid, enslaved or not (the name is set by the creating
 * RTM_NEWLINK, so even an ADD killed right after it is covered). By alias, for veths not named by hostVethName
 * (random `veth` names): weft-tagged ones on `bridge`, or on no bridge (an ADD killed between tagging and
 * enslaving; a finished ADD always enslaves), whose alias is not valid. Computed names of other
 * networks are left to their own GC.
 */
function isStaleVeth(l: Link, prefix: string, brIndex: number | undefined, keep: KeepVeths): boolean {
  if (l.kind !== 'veth') return false;
  if (isHostVethName(l.name)) {
    // A valid alias under an unlisted name part is a live pod whose name hash collides: kept.
    const validAlias = l.alias !== undefined && keep.aliases.has(l.alias);
    return l.name.startsWith(prefix) && !keep.parts.has(l.name.slice(prefix.length)) && !validAlias;
  }
  const onOurs = l.master === undefined || (brIndex !== undefined && l.master === brIndex);
  return onOurs && isAttachmentAlias(l.alias) && !keep.aliases.has(l.alias);
}

/** Deletes, in the node netns, the host veths isStaleVeth picks. Returns how many. */
function gcVeths(network: string, bridge: string, keep: KeepVeths): number {
  const host = Rtnl.open();
  let n = 0;
  try {
    const brIndex = host.getLink(bridge)?.index;
    const prefix = vethNetworkPrefix(network);
    for (const l of host.listLinks()) {
      if (!isStaleVeth(l, prefix, brIndex, keep)) continue;
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
  // Keys as Go decodes them ("ContainerID" too), with the same field tree the validator used.
  const valid = parseValidAttachments(normalizeKeys(a.config, validate.fields ?? {}));
  gcVeths(cfg.name, cfg.bridge, {
    parts: new Set(valid.map((v) => vethAttachmentPart(v.containerId, v.ifName))),
    aliases: new Set(valid.map((v) => attachmentAlias(v.containerId, v.ifName))),
  });
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

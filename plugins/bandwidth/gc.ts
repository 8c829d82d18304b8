// GC (CNI 1.1), in the node netns: deletes this network's ifbs (weft's MAC tag, bwp name) whose
// attachment is not in cni.dev/valid-attachments, e.g. what an ADD killed mid-way left behind.
// The qdiscs on a dead pod's host veth go with the veth.
import { invalidConfig } from '../../lib/cni/errors.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { isNotFound } from '../../lib/netlink/errors.ts';
import type { Link } from '../../lib/netlink/link.ts';
import { Rtnl } from '../../lib/netlink/rtnl.ts';
import { parseBandwidthConfig } from './config.ts';
import { ifbMac, ifbName, isIfbName } from './names.ts';

/** The ifbs GC of `network` deletes: ours (name shape, MAC tag of this network) and named for no valid attachment. Pure. */
export function staleIfbs(links: readonly Link[], network: string, valid: ReadonlyArray<{ containerId: string }>): Link[] {
  const mac = ifbMac(network);
  const keep = new Set(valid.map((v) => ifbName(network, v.containerId)));
  return links.filter((l) => l.kind === 'ifb' && isIfbName(l.name) && l.mac === mac && !keep.has(l.name));
}

/** GC. */
export function cmdGc(a: CmdArgs): void {
  const cfg = parseBandwidthConfig(a);
  // Reading a missing list as "nothing is valid" would unshape every pod of the network.
  if (cfg.validAttachments === null) throw invalidConfig('invalid configuration: GC needs cni.dev/valid-attachments');
  const host = Rtnl.open();
  try {
    for (const l of staleIfbs(host.listLinks(), cfg.name, cfg.validAttachments)) {
      try {
        host.deleteLink(l.index);
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
  } finally {
    host.close();
  }
}

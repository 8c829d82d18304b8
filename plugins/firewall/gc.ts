// GC (CNI 1.1): remove this network's pod elements whose attachment is not in cni.dev/valid-attachments.
import { invalidConfig } from '../../lib/cni/errors.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { keptNfnlSocket } from '../../lib/netfilter/nfnl/socket.ts';
import { parseFirewallConfig } from './config.ts';
import { deleteElems, listPodElems, selectElems } from './elements.ts';
import { elementComment } from './names.ts';

/** GC, in the node netns: one dump per family set, one transaction. */
export function cmdGc(a: CmdArgs): void {
  const cfg = parseFirewallConfig(a);
  // Reading a missing list as "nothing is valid" would open the firewall for no pod of the network.
  if (cfg.validAttachments === null) throw invalidConfig('invalid configuration: GC needs cni.dev/valid-attachments');
  const keep = new Set(cfg.validAttachments.map((v) => elementComment(v.containerId, v.ifName)));
  const sock = keptNfnlSocket();
  deleteElems(sock, selectElems(listPodElems(sock, cfg.name), (c) => !keep.has(c)));
}

// DEL: remove exactly this attachment's elements, found by comment (no netns or prevResult needed).
// Forgiving: nothing there is success, a second DEL too, and no kernel failure fails a parsable DEL.
import { log } from '../../lib/cni/log.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { keptNfnlSocket } from '../../lib/netfilter/nfnl/socket.ts';
import { parseFirewallConfig } from './config.ts';
import { deleteElems, listPodElems, selectElems } from './elements.ts';
import { elementComment } from './names.ts';

/** DEL, in the node netns. Rules, hooks and isolation elements stay: other pods and bridges use them. */
export function cmdDel(a: CmdArgs): void {
  const cfg = parseFirewallConfig(a);
  try {
    const sock = keptNfnlSocket();
    const comment = elementComment(a.containerId, a.ifName);
    deleteElems(sock, selectElems(listPodElems(sock, cfg.name), (c) => c === comment));
  } catch (e) {
    // DEL never blocks a runtime's cleanup (libcni stops the chain at the first failing DEL).
    log.warn('firewall DEL: could not remove elements', { error: e instanceof Error ? e.message : String(e) });
  }
}

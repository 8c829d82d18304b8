// DEL: remove exactly this attachment's elements, found by comment (no netns or prevResult needed).
// Forgiving: nothing there is success, a second DEL too, and neither a value the schema allows but
// ADD would refuse (an unknown ingressPolicy) nor a kernel failure fails it. A config of the wrong
// shape is refused (code 7) as on every verb.
import { log } from '../../lib/cni/log.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { keptNfnlSocket } from '../../lib/netfilter/nfnl/socket.ts';
import { validateConfig } from '../../lib/cni/validate.ts';
import { validate } from '../../gen/validators/firewall.js';
import { deleteElems, listPodElems, selectElems } from './elements.ts';
import { elementComment } from './names.ts';

/** The network name DEL works on: schema checks only (code 7), so a bad ingressPolicy must not leak elements. */
export function delNetwork(a: Pick<CmdArgs, 'config'>): string {
  return validateConfig<{ name: string }>(validate, a.config).name;
}

/** DEL, in the node netns. Rules, hooks and isolation elements stay: other pods and bridges use them. */
export function cmdDel(a: CmdArgs): void {
  const network = delNetwork(a);
  try {
    const sock = keptNfnlSocket();
    const comment = elementComment(a.containerId, a.ifName);
    deleteElems(sock, selectElems(listPodElems(sock, network), (c) => c === comment));
  } catch (e) {
    // DEL never blocks a runtime's cleanup (libcni stops the chain at the first failing DEL).
    log.warn('firewall DEL: could not remove elements', { error: e instanceof Error ? e.message : String(e) });
  }
}

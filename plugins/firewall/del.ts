// DEL: remove exactly this attachment's elements, found by comment (no netns or prevResult needed).
// Forgiving: nothing there is success, a second DEL too, and neither a config ADD would refuse (an
// unknown ingressPolicy, a wrong type) nor a kernel failure fails it: DEL never blocks cleanup.
import { log } from '../../lib/cni/log.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { keptNfnlSocket } from '../../lib/netfilter/nfnl/socket.ts';
import { CniError } from '../../lib/cni/errors.ts';
import { decodeForDel, stringAt, validateConfig } from '../../lib/cni/validate.ts';
import { validate } from '../../gen/validators/firewall.js';
import { deleteElems, listPodElems, selectElems } from './elements.ts';
import { elementComment } from './names.ts';

/** The network name DEL works on: the checked config's, else read from a config ADD would refuse (elements are found by comment). */
export function delNetwork(a: Pick<CmdArgs, 'config'>): string {
  try {
    return validateConfig<{ name: string }>(validate, a.config).name;
  } catch (e) {
    if (!(e instanceof CniError)) throw e;
    log.warn('firewall DEL with a config ADD would refuse: removing what can be found', { error: e.msg });
    return stringAt(decodeForDel(validate, a.config), 'name') ?? '';
  }
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

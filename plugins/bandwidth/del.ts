// DEL, in the node netns: removes the ifb (found by name: no netns or prevResult needed) and, when
// the pod netns and prevResult still lead to the host veth, its qdiscs. Never blocks a runtime's
// cleanup: a config the schema or the rate rules refuse still deletes by network name.
import { CniError, ErrorCode } from '../../lib/cni/errors.ts';
import { log } from '../../lib/cni/log.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { decodeForDel, stringAt } from '../../lib/cni/validate.ts';
import { validate } from '../../gen/validators/bandwidth.js';
import { Rtnl } from '../../lib/netlink/rtnl.ts';
import { Tc } from '../../lib/netlink/tc.ts';
import { removeShaping } from './add.ts';
import { parseBandwidthConfig } from './config.ts';
import { openPodNetns } from '../../lib/pod/netns.ts';
import { findHostVeth } from './host-veth.ts';
import { ifbName } from './names.ts';

/** The network name DEL works with: from the parsed config, or straight from stdin when parsing refuses it. */
export function delNetworkName(a: Pick<CmdArgs, 'config' | 'cniVersion'>): string | null {
  try {
    return parseBandwidthConfig(a).name;
  } catch (e) {
    if (!(e instanceof CniError) || e.code !== ErrorCode.invalidConfig) throw e;
    const name = stringAt(decodeForDel(validate, a.config), 'name');
    return name !== undefined && name !== '' ? name : null;
  }
}

/** DEL. Succeeds when nothing is there, without CNI_NETNS, without prevResult, and a second time. */
export function cmdDel(a: CmdArgs): void {
  const network = delNetworkName(a);
  if (network === null) return; // no name, no ifb name: nothing of ours can be found
  const host = Rtnl.open();
  try {
    removeShaping(host, new Tc(host), hostVethIndex(host, a), ifbName(network, a.containerId));
  } finally {
    host.close();
  }
}

/** The host veth's index when the pod netns and prevResult still lead to it; null otherwise (the veth goes with the pod). */
function hostVethIndex(host: Rtnl, a: CmdArgs): number | null {
  if (a.netns === '' || a.prevResult === undefined) return null;
  try {
    const pod = openPodNetns(a.netns);
    try {
      return findHostVeth(host, a.prevResult, pod, a.ifName).index;
    } finally {
      pod.close();
    }
  } catch (e) {
    log.debug('bandwidth DEL: host veth not found, removing the ifb only', { why: e instanceof Error ? e.message : String(e) });
    return null;
  }
}

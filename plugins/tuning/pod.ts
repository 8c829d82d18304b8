// Running tuning work on the pod's link: lib/pod's socket inside the pod netns, the link looked up by name.
import type { Link } from '../../lib/netlink/link.ts';
import type { Rtnl } from '../../lib/netlink/rtnl.ts';
import type { NetnsHandle } from '../../lib/netns/handle.ts';
import { inPodNetns } from '../../lib/pod/netns.ts';
import { noInterface } from './errors.ts';

/**
 * Runs `fn` synchronously inside the pod netns with a route socket opened there and the link
 * `ifName` (null when `optional` and absent; code 141 otherwise). Closes the socket.
 */
export function inPod<T>(ns: NetnsHandle, ifName: string, fn: (rtnl: Rtnl, link: Link | null) => T, optional = false): T {
  return inPodNetns(ns, (rtnl) => {
    const link = rtnl.getLink(ifName);
    if (link === null && !optional) throw noInterface(`tuning: interface ${ifName} not found in the pod`);
    return fn(rtnl, link);
  });
}

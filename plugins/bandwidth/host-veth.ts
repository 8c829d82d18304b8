// Finding the host end of the pod's veth as the reference does: the pod interface's peer index, read
// inside the pod netns, names a host link that prevResult must list as a host-side interface.
import { invalidConfig, unknownContainer } from '../../lib/cni/errors.ts';
import type { Result } from '../../lib/cni/types.ts';
import type { Link } from '../../lib/netlink/link.ts';
import { Rtnl } from '../../lib/netlink/rtnl.ts';
import { openNetns, type NetnsHandle } from '../../lib/netns/handle.ts';
import { withNetns } from '../../lib/netns/with-netns.ts';
import { noHostVeth } from './errors.ts';

/** The chained plugin's input: bandwidth only ever runs after an interface plugin. */
export function requirePrevResult(prev: Result | undefined): Result {
  if (prev === undefined) throw invalidConfig('must be called as chained plugin', 'prevResult is missing');
  return prev;
}

/** True for the errors that mean "this netns path is gone or is not a netns". */
export function isNetnsGone(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTNETNS';
}

/** Opens CNI_NETNS; code 3 when it does not exist or is not a network namespace. */
export function openPodNetns(path: string): NetnsHandle {
  try {
    return openNetns(path);
  } catch (e) {
    if (isNetnsGone(e)) throw unknownContainer('failed to open netns', `${JSON.stringify(path)}: ${(e as Error).message}`);
    throw e;
  }
}

/** The pod interface's veth peer index, read in the pod netns; 0 when it is missing or not a veth. */
export function podPeerIndex(pod: NetnsHandle, ifName: string): number {
  return withNetns(pod, () => {
    const r = Rtnl.open();
    try {
      const l = r.getLink(ifName);
      return l?.kind === 'veth' ? (l.peerIndex ?? 0) : 0;
    } finally {
      r.close();
    }
  });
}

/** The host veth (in `host`'s netns) of the pod's `ifName`, which prevResult lists without a sandbox; code 130 otherwise. */
export function findHostVeth(host: Rtnl, prev: Result, pod: NetnsHandle, ifName: string): Link {
  const ifaces = prev.interfaces ?? [];
  if (ifaces.length === 0) throw noHostVeth('no interfaces provided', 'prevResult lists no interfaces');
  const peer = podPeerIndex(pod, ifName);
  if (peer <= 0) throw noHostVeth(`container interface ${ifName} has no veth peer`);
  const link = host.getLinkByIndex(peer);
  if (link === null) throw noHostVeth(`veth peer with index ${peer} is not in host ns`);
  if (!ifaces.some((i) => (i.sandbox ?? '') === '' && i.name === link.name)) {
    throw noHostVeth('no veth peer of container interface found in host ns', `host peer ${link.name} is not a host interface of prevResult`);
  }
  return link;
}

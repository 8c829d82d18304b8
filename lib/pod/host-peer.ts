// The host end of a pod's veth as the reference finds it: the pod interface's peer index, read in
// the pod netns, names a link of the node netns. Called from the node netns.
import type { Link } from '../netlink/link.ts';
import type { Rtnl } from '../netlink/rtnl.ts';
import type { NetnsHandle } from '../netns/handle.ts';
import { inPodNetns } from './netns.ts';

/** The pod interface `ifName`'s veth peer index, read in the pod netns; 0 when it is missing or not a veth. */
export function podPeerIndex(pod: NetnsHandle, ifName: string): number {
  return inPodNetns(pod, (r) => {
    const l = r.getLink(ifName);
    return l?.kind === 'veth' ? (l.peerIndex ?? 0) : 0;
  });
}

/**
 * The host-side peer (a link of `host`, a socket of the node netns) of the pod's `ifName`, with the
 * peer index found; link null when the pod interface has no veth peer or the peer is not in `host`'s netns.
 */
export function findHostPeer(host: Rtnl, pod: NetnsHandle, ifName: string): { peerIndex: number; link: Link | null } {
  const peerIndex = podPeerIndex(pod, ifName);
  return { peerIndex, link: peerIndex > 0 ? host.getLinkByIndex(peerIndex) : null };
}

// Finding the host end of the pod's veth as the reference does: the pod interface's peer (lib/pod),
// which prevResult must list as a host-side interface. Called from the node netns.
import { invalidConfig } from '../../lib/cni/errors.ts';
import type { Result } from '../../lib/cni/types.ts';
import type { Link } from '../../lib/netlink/link.ts';
import type { Rtnl } from '../../lib/netlink/rtnl.ts';
import type { NetnsHandle } from '../../lib/netns/handle.ts';
import { findHostPeer } from '../../lib/pod/host-peer.ts';
import { noHostVeth } from './errors.ts';

/** The chained plugin's input: bandwidth only ever runs after an interface plugin. */
export function requirePrevResult(prev: Result | undefined): Result {
  if (prev === undefined) throw invalidConfig('must be called as chained plugin', 'prevResult is missing');
  return prev;
}

/** The host veth (in `host`'s netns) of the pod's `ifName`, which prevResult lists without a sandbox; code 130 otherwise. */
export function findHostVeth(host: Rtnl, prev: Result, pod: NetnsHandle, ifName: string): Link {
  const ifaces = prev.interfaces ?? [];
  if (ifaces.length === 0) throw noHostVeth('no interfaces provided', 'prevResult lists no interfaces');
  const { peerIndex, link } = findHostPeer(host, pod, ifName);
  if (peerIndex <= 0) throw noHostVeth(`container interface ${ifName} has no veth peer`);
  if (link === null) throw noHostVeth(`veth peer with index ${peerIndex} is not in host ns`);
  if (!ifaces.some((i) => (i.sandbox ?? '') === '' && i.name === link.name)) {
    throw noHostVeth('no veth peer of container interface found in host ns', `host peer ${link.name} is not a host interface of prevResult`);
  }
  return link;
}

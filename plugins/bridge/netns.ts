// Opening the pod namespace and a route socket bound to it, with CNI errors for a missing/bad path.
import { unknownContainer } from '../../lib/cni/errors.ts';
import { Rtnl } from '../../lib/netlink/rtnl.ts';
import { openNetns, type NetnsHandle } from '../../lib/netns/handle.ts';
import { withNetns } from '../../lib/netns/with-netns.ts';

/** The pod netns and a socket created inside it (it keeps acting there after we return to the node netns). */
export interface PodNs {
  ns: NetnsHandle;
  rtnl: Rtnl;
  close(): void;
}

/** True for the errors that mean "this netns path is gone or is not a netns". */
export function isNetnsGone(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTNETNS';
}

/** Opens CNI_NETNS; code 3 when it does not exist or is not a network namespace. */
export function openPodNs(path: string): PodNs {
  let ns: NetnsHandle;
  try {
    ns = openNetns(path);
  } catch (e) {
    if (isNetnsGone(e)) throw unknownContainer('failed to open netns', `${JSON.stringify(path)}: ${(e as Error).message}`);
    throw e;
  }
  try {
    const rtnl = withNetns(ns, () => Rtnl.open());
    return { ns, rtnl, close: () => { rtnl.close(); ns.close(); } };
  } catch (e) {
    ns.close();
    throw e;
  }
}

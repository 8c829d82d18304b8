// Running tuning work in the pod netns: one Rtnl socket opened there, the link looked up by name.
import { unknownContainer } from '../../lib/cni/errors.ts';
import { Rtnl } from '../../lib/netlink/rtnl.ts';
import type { Link } from '../../lib/netlink/link.ts';
import { openNetns, type NetnsHandle } from '../../lib/netns/handle.ts';
import { withNetns } from '../../lib/netns/with-netns.ts';
import { noInterface } from './errors.ts';

/** True for the errors that mean "this netns path is gone or is not a netns". */
export function isNetnsGone(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTNETNS';
}

/** Opens CNI_NETNS; code 3 when it does not exist or is not a network namespace. */
export function openPod(path: string): NetnsHandle {
  try {
    return openNetns(path);
  } catch (e) {
    if (isNetnsGone(e)) throw unknownContainer('failed to open netns', `${JSON.stringify(path)}: ${(e as Error).message}`);
    throw e;
  }
}

/**
 * Runs `fn` synchronously inside the pod netns with a route socket opened there and the link
 * `ifName` (null when `optional` and absent; code 141 otherwise). Closes socket and handle.
 */
export function inPod<T>(ns: NetnsHandle, ifName: string, fn: (rtnl: Rtnl, link: Link | null) => T, optional = false): T {
  return withNetns(ns, () => {
    const rtnl = Rtnl.open();
    try {
      const link = rtnl.getLink(ifName);
      if (link === null && !optional) throw noInterface(`tuning: interface ${ifName} not found in the pod`);
      return fn(rtnl, link);
    } finally {
      rtnl.close();
    }
  });
}

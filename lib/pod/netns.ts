// The pod's network namespace as every plugin meets it: CNI_NETNS opened (code 3 when it is gone or
// is not a netns), work run with a route socket created inside it, and the one test for "the pod is
// gone" that DEL paths treat as nothing left to do. Called from the node netns.
import { CniError, ErrorCode, unknownContainer } from '../cni/errors.ts';
import { Rtnl } from '../netlink/rtnl.ts';
import { openNetns, type NetnsHandle } from '../netns/handle.ts';
import { withNetns } from '../netns/with-netns.ts';
import { isSysError } from '../errno/errno.ts';

/** True for the errors that mean "this netns path is gone or is not a netns" (ENOENT, ENOTNETNS). */
export function isNetnsGone(e: unknown): boolean {
  return isSysError(e, 'ENOENT', 'ENOTNETNS');
}

/** True when `e` says the pod's netns is gone: the open's own error, or the code 3 openPodNetns made of it. */
export function isPodGone(e: unknown): boolean {
  return isNetnsGone(e) || (e instanceof CniError && e.code === ErrorCode.unknownContainer);
}

/** Opens CNI_NETNS from the node netns; code 3 when it does not exist or is not a network namespace. */
export function openPodNetns(path: string): NetnsHandle {
  try {
    return openNetns(path);
  } catch (e) {
    if (isNetnsGone(e)) throw unknownContainer('failed to open netns', `${JSON.stringify(path)}: ${(e as Error).message}`);
    throw e;
  }
}

/** The pod netns and a route socket created inside it (it keeps acting there after we return to the node netns). */
export interface PodNs {
  ns: NetnsHandle;
  rtnl: Rtnl;
  /** Closes the socket and the handle. */
  close(): void;
}

/** Opens CNI_NETNS (code 3 when gone) with a route socket inside it, both kept until close(). */
export function openPodNs(path: string): PodNs {
  const ns = openPodNetns(path);
  try {
    const rtnl = withNetns(ns, () => Rtnl.open());
    return { ns, rtnl, close: () => { rtnl.close(); ns.close(); } };
  } catch (e) {
    ns.close();
    throw e;
  }
}

/**
 * Runs `fn` synchronously on this thread inside the pod netns (`pod`: an open handle, or a path
 * opened and closed here, code 3 when gone), with a route socket opened there and closed afterwards.
 */
export function inPodNetns<T>(pod: NetnsHandle | string, fn: (rtnl: Rtnl) => T): T {
  return inPodNetnsWith(pod, () => Rtnl.open(), fn);
}

/** inPodNetns with the socket `open` makes inside the pod netns (RtnlLinks.open: a bundle that only reads links and addresses). */
export function inPodNetnsWith<S extends { close(): void }, T>(pod: NetnsHandle | string, open: () => S, fn: (sock: S) => T): T {
  const ns = typeof pod === 'string' ? openPodNetns(pod) : pod;
  try {
    return withNetns(ns, () => {
      const sock = open();
      try {
        return fn(sock);
      } finally {
        sock.close();
      }
    });
  } finally {
    if (typeof pod === 'string') ns.close();
  }
}

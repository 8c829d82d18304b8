// The loopback plugin: brings `lo` up (ADD) or down (DEL) inside the pod's network namespace.
import type { CmdArgs, Plugin } from '../../lib/cni/skel.ts';
import type { Result } from '../../lib/cni/types.ts';
import { SUPPORTED_VERSIONS } from '../../lib/cni/types.ts';
import { CniError } from '../../lib/cni/errors.ts';
import { isNotFound } from '../../lib/netlink/errors.ts';
import { RtnlLinks } from '../../lib/netlink/rtnl-links.ts';
import { inPodNetnsWith, isPodGone } from '../../lib/pod/netns.ts';
import { parseLoopbackConfig } from './config.ts';

const LOOPBACK_MAC = '00:00:00:00:00:00';

// loopback only reads and sets links and reads addresses: RtnlLinks keeps the other codecs out of its bundle.
const openRtnl = (): RtnlLinks => RtnlLinks.open();

/** Finds `lo` in the current namespace; every network namespace has one (created by the kernel). */
function getLoopback(rtnl: RtnlLinks): { index: number; up: boolean } {
  const lo = rtnl.getLink('lo');
  if (lo === null) throw new CniError(5, 'no loopback device in the namespace', '');
  return lo;
}

// `lo` is registered first in every network namespace, with a fixed ifindex (LOOPBACK_IFINDEX,
// include/net/net_namespace.h, since Linux 3.7): ADD needs no lookup by name.
const LOOPBACK_IFINDEX = 1;

/** Sets `lo` up; a namespace without it (ENODEV) is code 5 as in getLoopback. */
function setLoopbackUp(rtnl: RtnlLinks): void {
  try {
    rtnl.setLinkUp(LOOPBACK_IFINDEX);
  } catch (e) {
    if (isNotFound(e)) throw new CniError(5, 'no loopback device in the namespace', '');
    throw e;
  }
}

/** ADD: set `lo` up in the pod netns and report the addresses the kernel gave it. */
function cmdAdd(args: CmdArgs): Result {
  parseLoopbackConfig(args.config);
  const ips = inPodNetnsWith(args.netns, openRtnl, (rtnl) => {
    const lo = { index: LOOPBACK_IFINDEX };
    setLoopbackUp(rtnl);
    // The kernel assigns 127.0.0.1/8 and ::1/128 itself when lo comes up (net/ipv4/devinet.c,
    // net/ipv6/addrconf.c); we report what is really there, so a pod with IPv6 disabled gets no ::1.
    return rtnl.listAddrs({ index: lo.index }).map((a) => ({ address: a.cidr, interface: 0 }));
  });
  return {
    cniVersion: args.config.cniVersion,
    interfaces: [{ name: 'lo', mac: LOOPBACK_MAC, sandbox: args.netns }],
    ips,
    dns: {},
  };
}

/** DEL (any config): set `lo` down; a namespace that is already gone (or no netns given) means there is nothing to do. */
function cmdDel(args: CmdArgs): void {
  // DEL never blocks cleanup: nothing of the config is needed to set lo down, so none is checked.
  if (args.netns === '') return;
  try {
    inPodNetnsWith(args.netns, openRtnl, (rtnl) => rtnl.setLinkDown(getLoopback(rtnl).index));
  } catch (e) {
    if (isPodGone(e)) return;
    throw e;
  }
}

/** CHECK: `lo` must be up in the pod netns. */
function cmdCheck(args: CmdArgs): void {
  parseLoopbackConfig(args.config);
  const up = inPodNetnsWith(args.netns, openRtnl, (rtnl) => getLoopback(rtnl).up);
  if (!up) throw new CniError(100, 'loopback interface is down', `netns ${args.netns}`);
}

/** The plugin object: handlers for the CNI verbs; STATUS is always ready and GC has nothing to free. */
export const loopbackPlugin: Plugin = {
  name: 'loopback',
  version: '0.1.0',
  supportedVersions: SUPPORTED_VERSIONS,
  add: cmdAdd,
  del: cmdDel,
  check: cmdCheck,
  status: () => undefined,
  gc: () => undefined,
};

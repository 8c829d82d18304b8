// One read of the node's network state through rtnetlink (no `ip`/`bridge` spawns), in the calling
// thread's netns (run doctor inside the node's netns): links, IPv4 addresses and main-table routes,
// neighbours and FDB entries, plus the uplink weftd would choose for the same --iface/--public-ip.
import { Rtnl, type Addr, type Fdb, type Link, type Neigh, type Route } from '../../lib/netlink/index.ts';
import { chooseUplink, type Uplink, type UplinkQuery } from '../../agent/inspect.ts';

/** Everything the kernel checks look at. */
export interface NodeState {
  links: Link[];
  addrs: Addr[];
  routes: Route[];
  neighs: Neigh[];
  fdbs: Fdb[];
  /** The uplink, or the reason it cannot be found. */
  uplink: Uplink | { error: string };
}

/** Reads the node state from the current netns. */
export function readNodeState(q: UplinkQuery): NodeState {
  const rtnl = Rtnl.open();
  try {
    const links = rtnl.listLinks();
    const addrs = rtnl.listAddrs({ family: 4 });
    const routes = rtnl.listRoutes({ family: 4, table: 254 });
    const neighs = rtnl.listNeigh({ family: 4 });
    const fdbs = links.some((l) => l.kind === 'vxlan') ? rtnl.listFdb({}) : [];
    let uplink: NodeState['uplink'];
    try {
      uplink = chooseUplink(links, addrs, routes, q);
    } catch (e) {
      uplink = { error: (e as Error).message };
    }
    return { links, addrs, routes, neighs, fdbs, uplink };
  } finally {
    rtnl.close();
  }
}

/** The uplink when it was found. */
export function uplinkOf(s: NodeState): Uplink | null {
  return 'error' in s.uplink ? null : s.uplink;
}

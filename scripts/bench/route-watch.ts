// "Programmed" as the weftd benchmarks observe it: the kernel's RTM_NEWROUTE notification for a
// lease's subnet (proto weft) in each node namespace, timestamped as it arrives. The route is the
// last of neighbour, FDB, route, so the figure is kernel state, not a log line. A notification
// burst can overrun the socket; the node's routes are then listed and every route not yet seen is
// stamped with the listing time (later than the truth: an overrun never flatters a figure).
import { RTPROT_WEFT } from '../../agent/reconcile/desired.ts';
import { Rtnl, RtnlEvents } from '../../lib/netlink/index.ts';
import { openNetns, withNetns } from '../../lib/netns/index.ts';
import type { Cluster } from '../../testkit/cluster.ts';

/** Per node, subnet -> wall ms (performance.timeOrigin + now) of its route's first notification. */
export interface RouteWatch {
  seen: Array<Map<string, number>>;
  overruns: () => number;
  /** Forgets what node `i` has seen (before its weftd starts over on an empty VTEP). */
  reset: (i: number) => void;
  /** Fills in routes an overrun hid (call while polling). */
  catchUp: () => void;
  close: () => void;
}

function wallMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Opens a route watch in every node namespace of `c` (the sockets stay bound to them). */
export function watchRoutes(c: Cluster): RouteWatch {
  const seen = c.nodes.map(() => new Map<string, number>());
  const lost = c.nodes.map(() => false);
  let overruns = 0;
  const socks = c.nodes.map((n, i) => {
    const h = openNetns(n.path);
    try {
      const ev = withNetns(h, () => RtnlEvents.open(['ipv4-route']));
      const rtnl = withNetns(h, () => Rtnl.open());
      ev.on((e) => {
        if (e.type === 'overrun') { overruns++; lost[i] = true; }
        if (e.type === 'newroute' && e.route?.protocol === RTPROT_WEFT) {
          const m = seen[i];
          if (m && !m.has(e.route.dst)) m.set(e.route.dst, wallMs());
        }
      });
      return { ev, rtnl };
    } finally {
      h.close();
    }
  });
  return {
    seen,
    overruns: () => overruns,
    reset: (i) => { seen[i]?.clear(); lost[i] = false; },
    catchUp: () => {
      socks.forEach((s, i) => {
        if (!lost[i]) return;
        lost[i] = false;
        const now = wallMs();
        const m = seen[i];
        for (const r of s.rtnl.listRoutes({ family: 4, table: 254 })) if (r.protocol === RTPROT_WEFT && m && !m.has(r.dst)) m.set(r.dst, now);
      });
    },
    close: () => socks.forEach((s) => { s.ev.close(); s.rtnl.close(); }),
  };
}

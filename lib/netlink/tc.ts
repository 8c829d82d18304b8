// Tc: the traffic-control verbs (qdiscs, classes, filters) over an Rtnl's socket. Synchronous like
// every rtnetlink verb here; acts on the namespace the socket was opened in.
import { NLM_F_CREATE, NLM_F_EXCL, NLM_F_REPLACE } from './constants.ts';
import type { Rtnl } from './rtnl.ts';
import type { NlSocket } from './socket.ts';
import {
  RTM_DELQDISC, RTM_GETQDISC, RTM_GETTCLASS, RTM_GETTFILTER, RTM_NEWQDISC, RTM_NEWTCLASS, RTM_NEWTFILTER,
  filterInfo, formatKindOptions, formatTcHandle, formatTcmsg, parseTcObject, type TcObject,
} from './tc-msg.ts';

/** A qdisc or class to create: `options` are TCA_OPTIONS children (undefined sends none, as for ingress). */
export interface TcSpec {
  ifindex: number;
  handle: number;
  parent: number;
  kind: string;
  options?: Uint8Array[];
}

/** A filter to create; the kernel picks its handle. */
export interface TcFilterSpec {
  ifindex: number;
  parent: number;
  prio: number;
  /** Ethernet protocol in host order (ETH_P_ALL, ETH_P_IP, ...). */
  protocol: number;
  kind: string;
  options: Uint8Array[];
}

/** Traffic-control verbs. Failures throw NetlinkError with the kernel's errno and extended ack. */
export class Tc {
  private readonly sock: NlSocket;

  constructor(rtnl: Rtnl) {
    this.sock = rtnl.socket;
  }

  /** Adds a qdisc; EEXIST when one is attached at `parent` unless `replace` (which swaps it, kind included). */
  addQdisc(q: TcSpec, replace = false): void {
    const flags = NLM_F_CREATE | (replace ? NLM_F_REPLACE : NLM_F_EXCL);
    this.sock.request(`addQdisc ${q.kind} ${formatTcHandle(q.parent)} dev ${q.ifindex}`, RTM_NEWQDISC, flags,
      formatTcmsg(q, formatKindOptions(q.kind, q.options)));
  }

  /** Deletes the qdisc at `parent` (TC_H_ROOT or TC_H_INGRESS); ENOENT or EINVAL when there is none of ours. */
  delQdisc(o: { ifindex: number; parent: number; handle?: number }): void {
    this.sock.request(`delQdisc ${formatTcHandle(o.parent)} dev ${o.ifindex}`, RTM_DELQDISC, 0,
      formatTcmsg({ ifindex: o.ifindex, parent: o.parent, handle: o.handle ?? 0 }));
  }

  /** Qdiscs of the namespace, or of one link (the kernel dumps all; we keep the link's). */
  listQdiscs(ifindex?: number): TcObject[] {
    return this.sock.dump('listQdiscs', RTM_GETQDISC, formatTcmsg({ ifindex: ifindex ?? 0, handle: 0, parent: 0 }))
      .filter((m) => m.type === RTM_NEWQDISC)
      .map((m) => parseTcObject(m.payload))
      .filter((q) => ifindex === undefined || q.ifindex === ifindex);
  }

  /** Adds a class (handle = classid); EEXIST when it exists. */
  addClass(c: TcSpec): void {
    this.sock.request(`addClass ${c.kind} ${formatTcHandle(c.handle)} dev ${c.ifindex}`, RTM_NEWTCLASS, NLM_F_CREATE | NLM_F_EXCL,
      formatTcmsg(c, formatKindOptions(c.kind, c.options)));
  }

  /** Classes of one link. */
  listClasses(ifindex: number): TcObject[] {
    return this.sock.dump(`listClasses dev ${ifindex}`, RTM_GETTCLASS, formatTcmsg({ ifindex, handle: 0, parent: 0 }))
      .filter((m) => m.type === RTM_NEWTCLASS)
      .map((m) => parseTcObject(m.payload));
  }

  /** Adds a filter under the qdisc `parent`. */
  addFilter(f: TcFilterSpec): void {
    this.sock.request(`addFilter ${f.kind} ${formatTcHandle(f.parent)} dev ${f.ifindex}`, RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL,
      formatTcmsg({ ifindex: f.ifindex, handle: 0, parent: f.parent, info: filterInfo(f.prio, f.protocol) }, formatKindOptions(f.kind, f.options)));
  }

  /** Filters attached to the qdisc `parent` of one link (u32 also dumps its hash-table entries). */
  listFilters(ifindex: number, parent: number): TcObject[] {
    return this.sock.dump(`listFilters dev ${ifindex}`, RTM_GETTFILTER, formatTcmsg({ ifindex, handle: 0, parent }))
      .filter((m) => m.type === RTM_NEWTFILTER)
      .map((m) => parseTcObject(m.payload));
  }
}

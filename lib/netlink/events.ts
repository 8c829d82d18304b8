// RtnlEvents: rtnetlink multicast notifications (links, routes, addresses, neighbours) for the node
// agent, read on the event loop through lib/sys's uv_poll watch. The socket listens in the netns
// the calling thread was in at open().
import { sys } from '../sys/index.ts';
import {
  AF_BRIDGE, NETLINK_ROUTE, RTM_DELADDR, RTM_DELLINK, RTM_DELNEIGH, RTM_DELROUTE, RTM_NEWADDR, RTM_NEWLINK, RTM_NEWNEIGH,
  RTM_NEWROUTE, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_IFADDR, RTNLGRP_IPV6_ROUTE, RTNLGRP_LINK, RTNLGRP_NEIGH,
} from './constants.ts';
import { parseFdb, type Fdb } from './fdb.ts';
import { parseNlMsgs, type NlMsg } from './framing.ts';
import { parseAddr, type Addr } from './ifaddr.ts';
import { parseLink, type Link } from './link.ts';
import { parseNeigh, type Neigh } from './neigh.ts';
import { parseRoute, type Route } from './route.ts';
import { openSysTransport, type NlTransport } from './socket.ts';
import { isSysError } from '../errno/errno.ts';

export type RtnlGroup = 'link' | 'ipv4-route' | 'ipv6-route' | 'neigh' | 'ipv4-ifaddr' | 'ipv6-ifaddr';

const GROUPS: Record<RtnlGroup, number> = {
  link: RTNLGRP_LINK,
  neigh: RTNLGRP_NEIGH,
  'ipv4-ifaddr': RTNLGRP_IPV4_IFADDR,
  'ipv4-route': RTNLGRP_IPV4_ROUTE,
  'ipv6-ifaddr': RTNLGRP_IPV6_IFADDR,
  'ipv6-route': RTNLGRP_IPV6_ROUTE,
};

/**
 * One notification. 'overrun' means the kernel dropped notifications (ENOBUFS: our receive buffer
 * filled up); the listener must re-list whatever it mirrors.
 */
export interface RtnlEvent {
  type: 'newlink' | 'dellink' | 'newroute' | 'delroute' | 'newneigh' | 'delneigh' | 'newaddr' | 'deladdr' | 'overrun';
  link?: Link;
  route?: Route;
  addr?: Addr;
  /** IPv4/IPv6 neighbour (ARP/ND). */
  neigh?: Neigh;
  /** AF_BRIDGE neighbour: an FDB entry. */
  fdb?: Fdb;
}

/** Decodes one notification message; null for types and families we do not follow. */
export function parseRtnlEvent(m: Pick<NlMsg, 'type' | 'payload'>): RtnlEvent | null {
  switch (m.type) {
    case RTM_NEWLINK:
    case RTM_DELLINK:
      return { type: m.type === RTM_NEWLINK ? 'newlink' : 'dellink', link: parseLink(m.payload) };
    case RTM_NEWROUTE:
    case RTM_DELROUTE: {
      const route = parseRoute(m.payload);
      return route ? { type: m.type === RTM_NEWROUTE ? 'newroute' : 'delroute', route } : null;
    }
    case RTM_NEWADDR:
    case RTM_DELADDR: {
      const addr = parseAddr(m.payload);
      return addr ? { type: m.type === RTM_NEWADDR ? 'newaddr' : 'deladdr', addr } : null;
    }
    case RTM_NEWNEIGH:
    case RTM_DELNEIGH: {
      const type = m.type === RTM_NEWNEIGH ? 'newneigh' : 'delneigh';
      if (m.payload[0] === AF_BRIDGE) {
        const fdb = parseFdb(m.payload);
        return fdb ? { type, fdb } : null;
      }
      const neigh = parseNeigh(m.payload);
      return neigh ? { type, neigh } : null;
    }
    default:
      return null;
  }
}

/** A subscription to rtnetlink notifications, delivered on the event loop. */
export class RtnlEvents {
  private readonly listeners: Array<(ev: RtnlEvent) => void> = [];
  private pollId: number | undefined;

  private constructor(private readonly transport: NlTransport & { fd: number }, ref: boolean) {
    this.pollId = sys().pollStart(transport.fd, () => this.drain(), ref);
  }

  /**
   * Subscribes, in the calling thread's current netns, to `groups`. The watch keeps the event loop
   * alive unless `ref` is false.
   */
  static open(groups: readonly RtnlGroup[], opts: { ref?: boolean } = {}): RtnlEvents {
    // Bind-time groups are a 32-bit mask of (1 << (group - 1)); all of ours are below 32.
    let mask = 0;
    for (const g of groups) mask |= 1 << (GROUPS[g] - 1);
    return new RtnlEvents(openSysTransport(NETLINK_ROUTE, mask >>> 0), opts.ref ?? true);
  }

  /** Adds a listener; it runs on the event loop for every notification. */
  on(cb: (ev: RtnlEvent) => void): void {
    this.listeners.push(cb);
  }

  /** Stops the watch and closes the socket. Idempotent. */
  close(): void {
    if (this.pollId === undefined) return;
    sys().pollStop(this.pollId);
    this.pollId = undefined;
    this.transport.close();
  }

  /** Reads every queued datagram without blocking and dispatches what it holds. */
  private drain(): void {
    while (this.pollId !== undefined) {
      let buf: Uint8Array | null;
      try {
        buf = this.transport.recv(0);
      } catch (e) {
        // ENOBUFS: the receive queue overflowed and notifications were lost (netlink(7)).
        if (isSysError(e, 'ENOBUFS')) { this.emit({ type: 'overrun' }); continue; }
        throw e;
      }
      if (!buf) return;
      for (const m of parseNlMsgs(buf)) {
        const ev = parseRtnlEvent(m);
        if (ev) this.emit(ev);
      }
    }
  }

  private emit(ev: RtnlEvent): void {
    for (const cb of this.listeners) cb(ev);
  }
}

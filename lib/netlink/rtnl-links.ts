// RtnlLinks: the rtnetlink verbs every plugin needs (read links, set them up or down, read
// addresses) over one NETLINK_ROUTE socket; Rtnl (rtnl.ts) adds creating links, addresses, routes,
// neighbours and FDB entries. Kept apart so a bundle that only reads links and addresses (loopback)
// carries none of the other codecs. Every call is synchronous and acts on the namespace the socket
// was opened in, whatever the calling thread's netns is later.
import { attrStr, attrU32 } from './attrs.ts';
import { AF_UNSPEC, IFLA_EXT_MASK, IFLA_IFNAME, NETLINK_ROUTE, RTEXT_FILTER_SKIP_STATS, RTM_GETADDR, RTM_GETLINK, RTM_NEWADDR, RTM_NEWLINK, RTM_SETLINK, afOf } from './constants.ts';
import { isNotFound } from './errors.ts';
import { formatIfaddr, parseAddr, type Addr } from './ifaddr.ts';
import { IFF_UP, formatIfinfo, parseLink, type Link } from './link.ts';
import { NlSocket, openSysTransport, type NlTransport } from './socket.ts';

/** Asks the kernel to leave the link statistics (about a third of each reply, and unused) out of RTM_GETLINK answers. */
export function skipStats(): Uint8Array {
  return attrU32(IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
}

/** An rtnetlink socket with the link and address reading verbs. Failed requests throw NetlinkError (see isNotFound/isExists). */
export class RtnlLinks {
  protected constructor(protected readonly sock: NlSocket) {}

  /** Opens a NETLINK_ROUTE socket in the calling thread's current netns; it stays bound to that netns. */
  static open(): RtnlLinks {
    return new RtnlLinks(new NlSocket(openSysTransport(NETLINK_ROUTE, 0)));
  }

  /** Wraps an injected transport (unit tests with a fake kernel). */
  static fromTransport(t: NlTransport): RtnlLinks {
    return new RtnlLinks(new NlSocket(t));
  }

  /** Closes the socket. */
  close(): void {
    this.sock.close();
  }

  /** The underlying socket, for verb families kept in their own files (tc.ts). */
  get socket(): NlSocket {
    return this.sock;
  }

  /** All links of the socket's netns. */
  listLinks(): Link[] {
    return this.sock.dump('listLinks', RTM_GETLINK, formatIfinfo({}, [skipStats()])).filter((m) => m.type === RTM_NEWLINK).map((m) => parseLink(m.payload));
  }

  /** The link called `name`, or null when there is none. */
  getLink(name: string): Link | null {
    return this.getOne(`getLink ${name}`, formatIfinfo({}, [attrStr(IFLA_IFNAME, name), skipStats()]));
  }

  /** The link with ifindex `index`, or null when there is none. */
  getLinkByIndex(index: number): Link | null {
    return this.getOne(`getLinkByIndex ${index}`, formatIfinfo({ index }, [skipStats()]));
  }

  private getOne(op: string, payload: Uint8Array): Link | null {
    try {
      const m = this.sock.request(op, RTM_GETLINK, 0, payload).find((x) => x.type === RTM_NEWLINK);
      return m ? parseLink(m.payload) : null;
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }

  /** One RTM_SETLINK of link `index`: `attrs`, and the flags in `change` set to their bits in `flags`. */
  protected setLink(op: string, index: number, attrs: Uint8Array[], flags = 0, change = 0): void {
    this.sock.request(op, RTM_SETLINK, 0, formatIfinfo({ index, flags, change }, attrs));
  }

  /** Sets IFF_UP. Idempotent. */
  setLinkUp(index: number): void { this.setLink(`setLinkUp ${index}`, index, [], IFF_UP, IFF_UP); }
  /** Clears IFF_UP. Idempotent. */
  setLinkDown(index: number): void { this.setLink(`setLinkDown ${index}`, index, [], 0, IFF_UP); }

  /** Addresses of the netns, optionally only one family and/or one link. */
  listAddrs(o: { family?: 4 | 6; index?: number } = {}): Addr[] {
    const req = formatIfaddr({ family: o.family ? afOf(o.family) : AF_UNSPEC, index: 0 });
    return this.sock.dump('listAddrs', RTM_GETADDR, req)
      .filter((m) => m.type === RTM_NEWADDR)
      .map((m) => parseAddr(m.payload))
      .filter((a): a is Addr => a !== null && (o.family === undefined || a.family === o.family) && (o.index === undefined || a.index === o.index));
  }
}

// Generic netlink (linux/genetlink.h): the genlmsghdr framing, family-id resolution through the
// controller (CTRL_CMD_GETFAMILY), and a socket that sends requests to a resolved family. Families
// such as "ethtool" get their message type number at run time, so it must be asked for first.
import { attrMap, attrStr, concat, getStr, getU16, getU32, parseAttrs, type NlAttr } from './attrs.ts';
import { NlSocket, openSysTransport, type NlTransport } from './socket.ts';

/** Protocol number of generic netlink (linux/netlink.h NETLINK_GENERIC). */
export const NETLINK_GENERIC = 16;
/** The controller's fixed message type (linux/genetlink.h GENL_ID_CTRL = NLMSG_MIN_TYPE). */
export const GENL_ID_CTRL = 0x10;
/** sizeof(struct genlmsghdr): u8 cmd, u8 version, u16 reserved. */
export const GENL_HDRLEN = 4;

/** Controller commands and attributes (linux/genetlink.h enum CTRL_CMD_*, CTRL_ATTR_*). */
export const CTRL_CMD_NEWFAMILY = 1;
export const CTRL_CMD_GETFAMILY = 3;
export const CTRL_ATTR_FAMILY_ID = 1;
export const CTRL_ATTR_FAMILY_NAME = 2;
export const CTRL_ATTR_VERSION = 3;
/** The controller's own interface version iproute2 and ethtool send. */
const CTRL_VERSION = 1;

/** One generic netlink payload: genlmsghdr fields and the attributes after it. */
export interface GenlMsg {
  cmd: number;
  version: number;
  attrs: NlAttr[];
}

/** Formats a genlmsghdr followed by already formatted attributes (the netlink header comes later). */
export function formatGenlMsg(cmd: number, version: number, attrs: readonly Uint8Array[]): Uint8Array {
  return concat([Uint8Array.of(cmd, version, 0, 0), ...attrs]);
}

/** Parses a genetlink payload (after the nlmsghdr); throws on one shorter than genlmsghdr. */
export function parseGenlMsg(payload: Uint8Array): GenlMsg {
  if (payload.length < GENL_HDRLEN) throw new RangeError(`generic netlink payload too short: ${payload.length} bytes`);
  return { cmd: payload[0] ?? 0, version: payload[1] ?? 0, attrs: parseAttrs(payload.subarray(GENL_HDRLEN)) };
}

/** The controller request asking for family `name`. */
export function formatGetFamily(name: string): Uint8Array {
  return formatGenlMsg(CTRL_CMD_GETFAMILY, CTRL_VERSION, [attrStr(CTRL_ATTR_FAMILY_NAME, name)]);
}

/** What the controller says about a family: its message type number and interface version. */
export interface GenlFamily {
  name: string;
  id: number;
  version: number;
}

/** Parses the controller's CTRL_CMD_NEWFAMILY answer; throws when the id is missing. */
export function parseFamily(payload: Uint8Array): GenlFamily {
  const m = attrMap(parseGenlMsg(payload).attrs);
  const id = m.get(CTRL_ATTR_FAMILY_ID);
  const name = m.get(CTRL_ATTR_FAMILY_NAME);
  const version = m.get(CTRL_ATTR_VERSION);
  if (id === undefined || id.data.length < 2) throw new RangeError('CTRL_CMD_NEWFAMILY without CTRL_ATTR_FAMILY_ID');
  return { name: name === undefined ? '' : getStr(name), id: getU16(id), version: version === undefined ? 0 : getU32(version) };
}

/** A NETLINK_GENERIC socket; synchronous like Rtnl, bound to the netns it was opened in. */
export class Genl {
  private readonly families = new Map<string, GenlFamily>();

  private constructor(private readonly sock: NlSocket) {}

  /** Opens a NETLINK_GENERIC socket in the calling thread's current netns. */
  static open(): Genl {
    return new Genl(new NlSocket(openSysTransport(NETLINK_GENERIC, 0)));
  }

  /** Wraps an injected transport (unit tests with a fake kernel). */
  static fromTransport(t: NlTransport): Genl {
    return new Genl(new NlSocket(t));
  }

  /** Closes the socket. */
  close(): void {
    this.sock.close();
  }

  /** The family's id and version (cached per socket); NetlinkError ENOENT when the kernel has no such family. */
  family(name: string): GenlFamily {
    const known = this.families.get(name);
    if (known !== undefined) return known;
    const replies = this.sock.request(`CTRL_CMD_GETFAMILY ${name}`, GENL_ID_CTRL, 0, formatGetFamily(name));
    const reply = replies.find((r) => r.type === GENL_ID_CTRL);
    if (reply === undefined) throw new RangeError(`CTRL_CMD_GETFAMILY ${name}: no answer before the ACK`);
    const fam = parseFamily(reply.payload);
    this.families.set(name, fam);
    return fam;
  }

  /** Sends one request (NLM_F_ACK) to `family`; returns the payloads of its replies. Throws NetlinkError on a refusal. */
  request(op: string, family: GenlFamily, cmd: number, attrs: readonly Uint8Array[]): Uint8Array[] {
    return this.sock.request(op, family.id, 0, formatGenlMsg(cmd, family.version, attrs)).filter((m) => m.type === family.id).map((m) => m.payload);
  }
}

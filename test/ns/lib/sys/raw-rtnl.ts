// Minimal hand-rolled rtnetlink for the sys/netns tests: an RTM_GETLINK dump and an IFLA_IFNAME
// reader, so these tests depend on nothing but the addon (include/uapi/linux/{netlink,rtnetlink}.h).
import { sys } from '../../../../lib/sys/index.ts';

export const NETLINK_ROUTE = 0;
export const RTNLGRP_LINK = 1;
export const RTM_NEWLINK = 16;
const RTM_GETLINK = 18;
const NLMSG_ERROR = 2;
const NLMSG_DONE = 3;
const NLM_F_REQUEST = 0x1;
const NLM_F_DUMP = 0x300;
const IFLA_IFNAME = 3;

/** nlmsghdr + ifinfomsg (AF_UNSPEC) asking for every link. */
export function getLinkDump(seq: number): Buffer {
  const b = Buffer.alloc(32);
  b.writeUInt32LE(32, 0);
  b.writeUInt16LE(RTM_GETLINK, 4);
  b.writeUInt16LE(NLM_F_REQUEST | NLM_F_DUMP, 6);
  b.writeUInt32LE(seq, 8);
  return b;
}

/** Splits one datagram into messages: [type, payload-with-header]. */
export function splitMessages(dgram: Buffer): { type: number; msg: Buffer }[] {
  const out: { type: number; msg: Buffer }[] = [];
  for (let off = 0; off + 16 <= dgram.length; ) {
    const len = dgram.readUInt32LE(off);
    if (len < 16 || off + len > dgram.length) throw new Error(`bad nlmsg length ${len} at ${off}`);
    out.push({ type: dgram.readUInt16LE(off + 4), msg: dgram.subarray(off, off + len) });
    off += (len + 3) & ~3;
  }
  return out;
}

/** IFLA_IFNAME of one RTM_NEWLINK message. */
export function linkName(msg: Buffer): string | undefined {
  for (let off = 32; off + 4 <= msg.length; ) {
    const len = msg.readUInt16LE(off);
    const type = msg.readUInt16LE(off + 2) & 0x3fff;
    if (len < 4) break;
    if (type === IFLA_IFNAME) return msg.toString('utf8', off + 4, off + len).replace(/\0+$/, '');
    off += (len + 3) & ~3;
  }
  return undefined;
}

/** Dumps the link names visible to netlink socket `fd` (whatever netns it was created in). */
export function dumpLinkNames(fd: number): string[] {
  const s = sys();
  s.nlSend(fd, getLinkDump(1));
  const names: string[] = [];
  for (;;) {
    const dgram = s.nlRecv(fd, 2000);
    if (dgram === null) throw new Error('timeout waiting for the RTM_GETLINK dump');
    for (const { type, msg } of splitMessages(dgram)) {
      if (type === NLMSG_DONE) return names.sort();
      if (type === NLMSG_ERROR) throw new Error(`netlink error ${-msg.readInt32LE(16)}`);
      if (type === RTM_NEWLINK) names.push(linkName(msg) ?? '?');
    }
  }
}

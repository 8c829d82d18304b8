// Per-packet forwarding decisions of the udp backend, pure over Buffers so they are unit-tested
// without a TUN: where a packet read from flannel0 goes, and whether a received datagram may be
// written to flannel0 (closed to strangers).
import {
  ICMP_DEST_UNREACH, ICMP_EXC_TTL, ICMP_NET_UNREACH, ICMP_TIME_EXCEEDED, IP_TTL,
  decrementTtl, formatIcmpError, ipv4Dst, ipv4HeaderLength, ipv4Src, mayAnswerWithIcmp,
} from './ipv4.ts';
import { SENDER_OK, SENDER_UNKNOWN_NODE, type PeerTable } from './peer-table.ts';
import {
  DROP_FOREIGN_SOURCE, DROP_MALFORMED, DROP_NOT_LOCAL, DROP_NO_ROUTE, DROP_OWN_SUBNET, DROP_TTL, DROP_UNKNOWN_NODE,
} from './counters.ts';

/** routeOutbound's verdict for a forwardable packet (otherwise a DROP_* index). */
export const SEND = -1;

/**
 * Decides the fate of a packet read from the TUN at buf[off, off+len). SEND: the TTL was
 * decremented and the owner's node address is in out.node. DROP_NO_ROUTE / DROP_TTL: an ICMP
 * error may have been written to icmp[icmpOff...] (out.icmpLen > 0). Any other DROP_*: drop.
 */
export function routeOutbound(
  buf: Buffer, off: number, len: number, table: PeerTable, localAddr: number,
  icmp: Buffer, icmpOff: number, out: { node: number; icmpLen: number },
): number {
  out.icmpLen = 0;
  const ihl = ipv4HeaderLength(buf, off, len);
  if (ihl === 0) return DROP_MALFORMED;
  const dst = ipv4Dst(buf, off);
  // Only reachable if a route sends our own subnet to flannel0; forwarding it to ourselves would loop.
  if (table.isLocal(dst)) return DROP_OWN_SUBNET;
  const node = table.lookup(dst);
  if (node < 0) {
    if (mayAnswerWithIcmp(buf, off, ihl, len)) out.icmpLen = formatIcmpError(icmp, icmpOff, buf, off, ihl, len, ICMP_DEST_UNREACH, ICMP_NET_UNREACH, localAddr);
    return DROP_NO_ROUTE;
  }
  // The forwarder is a hop (RFC 1812 5.3.1): TTL 1 or 0 cannot be forwarded.
  if ((buf[off + IP_TTL] as number) <= 1) {
    if (mayAnswerWithIcmp(buf, off, ihl, len)) out.icmpLen = formatIcmpError(icmp, icmpOff, buf, off, ihl, len, ICMP_TIME_EXCEEDED, ICMP_EXC_TTL, localAddr);
    return DROP_TTL;
  }
  decrementTtl(buf, off);
  out.node = node;
  return SEND;
}

/**
 * Decides whether a datagram's payload buf[off, off+len) received from node address `from`
 * (host order) may be written to the TUN: SEND, or the DROP_* reason. The sender must hold a
 * current lease, the inner source must lie in that lease, the inner destination in ours.
 */
export function checkInbound(buf: Buffer, off: number, len: number, from: number, table: PeerTable): number {
  const ihl = ipv4HeaderLength(buf, off, len);
  if (ihl === 0) return DROP_MALFORMED;
  const verdict = table.checkSender(from, ipv4Src(buf, off));
  if (verdict !== SENDER_OK) return verdict === SENDER_UNKNOWN_NODE ? DROP_UNKNOWN_NODE : DROP_FOREIGN_SOURCE;
  // Not a relay: only our own pods are reachable through us.
  if (!table.isLocal(ipv4Dst(buf, off))) return DROP_NOT_LOCAL;
  return SEND;
}

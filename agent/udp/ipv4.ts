// IPv4 and ICMP wire helpers for the udp forwarder, over Buffers in place (no allocation):
// header validation, TTL decrement with an incremental checksum update, ICMP error generation.
// Layouts: RFC 791 section 3.1 (IPv4 header), RFC 792 (ICMP), RFC 1624 (incremental checksum).

/** IPv4 header offsets (RFC 791 3.1). */
export const IP_TTL = 8;
export const IP_PROTO = 9;
export const IP_CSUM = 10;
export const IP_SRC = 12;
export const IP_DST = 16;
export const IPPROTO_ICMP = 1;

/** ICMP types and codes we generate (RFC 792). */
export const ICMP_DEST_UNREACH = 3;
export const ICMP_NET_UNREACH = 0;
export const ICMP_TIME_EXCEEDED = 11;
export const ICMP_EXC_TTL = 0;

/** Room an ICMP error needs: outer IP 20 + ICMP 8 + quoted header (max 60) + 8 bytes of data. */
export const ICMP_ERROR_MAX = 20 + 8 + 60 + 8;

/** Header length when buf[off, off+len) is a plausible IPv4 packet (version 4, IHL >= 5, total length fits), else 0. */
export function ipv4HeaderLength(buf: Buffer, off: number, len: number): number {
  if (len < 20) return 0;
  const vi = buf[off] as number;
  const ihl = (vi & 0x0f) * 4;
  if (vi >> 4 !== 4 || ihl < 20 || ihl > len) return 0;
  const total = buf.readUInt16BE(off + 2);
  return total >= ihl && total <= len ? ihl : 0;
}

/** Source address (host-order integer). */
export function ipv4Src(buf: Buffer, off: number): number {
  return buf.readUInt32BE(off + IP_SRC);
}

/** Destination address (host-order integer). */
export function ipv4Dst(buf: Buffer, off: number): number {
  return buf.readUInt32BE(off + IP_DST);
}

/** The Internet checksum (RFC 1071) of buf[off, off+len), ready to store. */
export function internetChecksum(buf: Buffer, off: number, len: number): number {
  let sum = 0;
  const end = off + (len & ~1);
  for (let i = off; i < end; i += 2) sum += buf.readUInt16BE(i);
  if (len & 1) sum += (buf[off + len - 1] as number) << 8;
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

/**
 * Decrements the TTL and patches the header checksum incrementally (RFC 1624 eqn. 3:
 * HC' = ~(~HC + ~m + m'), m the 16-bit word holding TTL and protocol). The caller checked TTL > 1.
 */
export function decrementTtl(buf: Buffer, off: number): void {
  const ttl = buf[off + IP_TTL] as number;
  const proto = buf[off + IP_PROTO] as number;
  const m = (ttl << 8) | proto;
  const m2 = ((ttl - 1) << 8) | proto;
  let sum = (~buf.readUInt16BE(off + IP_CSUM) & 0xffff) + (~m & 0xffff) + m2;
  sum = (sum & 0xffff) + (sum >>> 16);
  sum = (sum & 0xffff) + (sum >>> 16);
  buf[off + IP_TTL] = ttl - 1;
  buf.writeUInt16BE(~sum & 0xffff, off + IP_CSUM);
}

/**
 * True when an ICMP error may be sent about this packet (RFC 1122 3.2.2): not about an ICMP
 * error, not about a non-initial fragment, not to a broadcast/multicast/zero source.
 */
export function mayAnswerWithIcmp(buf: Buffer, off: number, ihl: number, len: number): boolean {
  const fragOffset = buf.readUInt16BE(off + 6) & 0x1fff;
  if (fragOffset !== 0) return false;
  const src = ipv4Src(buf, off);
  if (src === 0 || src >>> 28 >= 0xe) return false; // 0.0.0.0, multicast (224/4) and class E/broadcast
  if (buf[off + IP_PROTO] === IPPROTO_ICMP) {
    if (len < ihl + 1) return false;
    const t = buf[off + ihl] as number;
    // Only queries (echo 8/0, timestamp 13/14, ...) may trigger errors, never errors (3, 4, 5, 11, 12).
    if (t === 3 || t === 4 || t === 5 || t === 11 || t === 12) return false;
  }
  return true;
}

/**
 * Writes into out[outOff, ...) an IPv4 ICMP error of `type`/`code` from `src` about the packet
 * orig[off, off+len) (header length ihl): the quoted IP header plus 8 bytes of its data (RFC 792).
 * Returns the length written (at most ICMP_ERROR_MAX).
 */
export function formatIcmpError(out: Buffer, outOff: number, orig: Buffer, off: number, ihl: number, len: number, type: number, code: number, src: number): number {
  const quoted = Math.min(len, ihl + 8);
  const total = 20 + 8 + quoted;
  out.fill(0, outOff, outOff + 28);
  out[outOff] = 0x45;
  out[outOff + 1] = 0xc0; // precedence "internetwork control", as Linux sends ICMP errors
  out.writeUInt16BE(total, outOff + 2);
  out[outOff + IP_TTL] = 64;
  out[outOff + IP_PROTO] = IPPROTO_ICMP;
  out.writeUInt32BE(src >>> 0, outOff + IP_SRC);
  out.writeUInt32BE(ipv4Src(orig, off), outOff + IP_DST);
  out.writeUInt16BE(internetChecksum(out, outOff, 20), outOff + IP_CSUM);
  out[outOff + 20] = type;
  out[outOff + 21] = code;
  orig.copy(out, outOff + 28, off, off + quoted);
  out.writeUInt16BE(internetChecksum(out, outOff + 20, 8 + quoted), outOff + 22);
  return total;
}

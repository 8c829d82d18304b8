// Netlink message framing: struct nlmsghdr (linux/netlink.h), message runs in one datagram, and the
// NLMSG_ERROR / NLMSG_DONE payloads including extended-ack TLVs.
import { LE, align4, attrMap, getStr, getU32, parseAttrs, view } from './attrs.ts';
import { NLMSGERR_ATTR_MSG, NLMSGERR_ATTR_OFFS, NLM_F_ACK_TLVS, NLM_F_CAPPED } from './constants.ts';

/** sizeof(struct nlmsghdr): u32 len, u16 type, u16 flags, u32 seq, u32 pid. */
export const NLMSG_HDRLEN = 16;

/** One netlink message; `payload` excludes the header and padding. */
export interface NlMsg {
  type: number;
  flags: number;
  seq: number;
  pid: number;
  payload: Uint8Array;
}

/** Formats one message: header with the right nlmsg_len, payload, padding to 4 bytes. */
export function formatNlMsg(m: { type: number; flags: number; seq: number; pid?: number; payload: Uint8Array }): Uint8Array {
  const len = NLMSG_HDRLEN + m.payload.length;
  const out = new Uint8Array(align4(len));
  const dv = view(out);
  dv.setUint32(0, len, LE);
  dv.setUint16(4, m.type, LE);
  dv.setUint16(6, m.flags, LE);
  dv.setUint32(8, m.seq >>> 0, LE);
  dv.setUint32(12, (m.pid ?? 0) >>> 0, LE);
  out.set(m.payload, NLMSG_HDRLEN);
  return out;
}

/** Parses every message in one received datagram; throws on a truncated or inconsistent header. */
export function parseNlMsgs(buf: Uint8Array): NlMsg[] {
  const out: NlMsg[] = [];
  const dv = view(buf);
  let o = 0;
  while (o + NLMSG_HDRLEN <= buf.length) {
    const len = dv.getUint32(o, LE);
    if (len < NLMSG_HDRLEN || o + len > buf.length) {
      throw new RangeError(`malformed netlink message at offset ${o}: nlmsg_len ${len}, ${buf.length - o} bytes left`);
    }
    out.push({
      type: dv.getUint16(o + 4, LE),
      flags: dv.getUint16(o + 6, LE),
      seq: dv.getUint32(o + 8, LE),
      pid: dv.getUint32(o + 12, LE),
      payload: buf.subarray(o + NLMSG_HDRLEN, o + len),
    });
    o += align4(len);
  }
  return out;
}

/** Decoded NLMSG_ERROR (errno 0 = ACK) or NLMSG_DONE status. */
export interface NlStatus {
  /** Positive errno; 0 for success. The kernel sends it negated. */
  errno: number;
  /** NLMSGERR_ATTR_MSG: the kernel's human-readable reason, when it gave one. */
  extAck?: string;
  /** NLMSGERR_ATTR_OFFS: byte offset of the offending attribute in the request. */
  extAckOffset?: number;
  /** Header of the request this answers (NLMSG_ERROR only). */
  request?: { type: number; flags: number; seq: number; pid: number };
}

/** Parses extended-ack TLVs (present when NLM_F_ACK_TLVS is set) into `st`. */
function parseAckTlvs(tlvs: Uint8Array, st: NlStatus): void {
  const m = attrMap(parseAttrs(tlvs));
  const msg = m.get(NLMSGERR_ATTR_MSG);
  if (msg) st.extAck = getStr(msg);
  const offs = m.get(NLMSGERR_ATTR_OFFS);
  if (offs && offs.data.length >= 4) st.extAckOffset = getU32(offs);
}

/**
 * Parses an NLMSG_ERROR payload: struct nlmsgerr { int error; struct nlmsghdr msg; } followed by the
 * rest of the request unless NLM_F_CAPPED, then TLVs if NLM_F_ACK_TLVS (linux/netlink.h).
 */
export function parseNlError(m: Pick<NlMsg, 'flags' | 'payload'>): NlStatus {
  const p = m.payload;
  if (p.length < 4) throw new RangeError(`NLMSG_ERROR payload too short: ${p.length} bytes`);
  const dv = view(p);
  const st: NlStatus = { errno: -dv.getInt32(0, LE) | 0 };
  if (p.length >= 4 + NLMSG_HDRLEN) {
    const reqLen = dv.getUint32(4, LE);
    st.request = { type: dv.getUint16(8, LE), flags: dv.getUint16(10, LE), seq: dv.getUint32(12, LE), pid: dv.getUint32(16, LE) };
    if (m.flags & NLM_F_ACK_TLVS) {
      const echoed = m.flags & NLM_F_CAPPED ? NLMSG_HDRLEN : align4(reqLen);
      if (4 + echoed <= p.length) parseAckTlvs(p.subarray(4 + echoed), st);
    }
  }
  return st;
}

/** Parses an NLMSG_DONE payload: an int status (negative errno when the dump failed), then TLVs. */
export function parseNlDone(m: Pick<NlMsg, 'flags' | 'payload'>): NlStatus {
  // Very old kernels sent DONE with no payload; treat that as success.
  if (m.payload.length < 4) return { errno: 0 };
  const st: NlStatus = { errno: -view(m.payload).getInt32(0, LE) | 0 };
  if (m.flags & NLM_F_ACK_TLVS) parseAckTlvs(m.payload.subarray(4), st);
  return st;
}

// Netlink attribute (struct nlattr, linux/netlink.h) encoding and decoding. Integers are in host
// byte order, as the kernel expects, except attributes documented as big-endian (ports).
/** Host byte order, the order netlink integers use (linux/netlink.h: "native byte order"). Probed without node:os, which costs a module load at every start. */
export const LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export const NLA_HDRLEN = 4;
/** Set on nested attributes by newer kernels and required by a few parsers (e.g. AF_BRIDGE IFLA_PROTINFO). */
export const NLA_F_NESTED = 0x8000;
export const NLA_F_NET_BYTEORDER = 0x4000;
export const NLA_TYPE_MASK = ~(NLA_F_NESTED | NLA_F_NET_BYTEORDER) & 0xffff;

/** One decoded attribute; `data` is a view into the received buffer, without padding. */
export interface NlAttr {
  type: number;
  nested: boolean;
  data: Uint8Array;
}

/** Rounds up to the 4-byte alignment of NLA_ALIGN / NLMSG_ALIGN. */
export function align4(n: number): number {
  return (n + 3) & ~3;
}

/** A DataView over exactly the bytes of `b`. */
export function view(b: Uint8Array): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}

/** Concatenates byte arrays into one new array. */
export function concat(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
}

/** Formats one attribute with raw payload, padded to 4 bytes; `flags` may add NLA_F_NESTED. */
export function formatAttr(type: number, data: Uint8Array, flags = 0): Uint8Array {
  const len = NLA_HDRLEN + data.length;
  const out = new Uint8Array(align4(len));
  const dv = view(out);
  dv.setUint16(0, len, LE);
  dv.setUint16(2, type | flags, LE);
  out.set(data, NLA_HDRLEN);
  return out;
}

/** Attribute holding a u8. */
export function attrU8(type: number, v: number): Uint8Array {
  return formatAttr(type, Uint8Array.of(v));
}

/** Attribute holding a host-order u16. */
export function attrU16(type: number, v: number): Uint8Array {
  const b = new Uint8Array(2);
  view(b).setUint16(0, v, LE);
  return formatAttr(type, b);
}

/** Attribute holding a big-endian u16 (e.g. IFLA_VXLAN_PORT, a __be16). */
export function attrBe16(type: number, v: number): Uint8Array {
  const b = new Uint8Array(2);
  view(b).setUint16(0, v, false);
  return formatAttr(type, b);
}

/** Attribute holding a host-order u32. */
export function attrU32(type: number, v: number): Uint8Array {
  const b = new Uint8Array(4);
  view(b).setUint32(0, v >>> 0, LE);
  return formatAttr(type, b);
}

/** Attribute holding a host-order s32. */
export function attrS32(type: number, v: number): Uint8Array {
  const b = new Uint8Array(4);
  view(b).setInt32(0, v, LE);
  return formatAttr(type, b);
}

/** Attribute holding a NUL-terminated string (NLA_NUL_STRING / NLA_STRING as iproute2 sends it). */
export function attrStr(type: number, s: string): Uint8Array {
  const enc = Buffer.from(s, 'utf8');
  const b = new Uint8Array(enc.length + 1);
  b.set(enc, 0);
  return formatAttr(type, b);
}

/** Attribute nesting already formatted attributes; `flagNested` sets NLA_F_NESTED. */
export function attrNested(type: number, children: readonly Uint8Array[], flagNested = false): Uint8Array {
  return formatAttr(type, concat(children), flagNested ? NLA_F_NESTED : 0);
}

/** Parses a run of attributes; stops at trailing bytes too short for a header, throws on a bad length. */
export function parseAttrs(b: Uint8Array): NlAttr[] {
  const out: NlAttr[] = [];
  const dv = view(b);
  let o = 0;
  while (o + NLA_HDRLEN <= b.length) {
    const len = dv.getUint16(o, LE);
    const rawType = dv.getUint16(o + 2, LE);
    if (len < NLA_HDRLEN || o + len > b.length) {
      throw new RangeError(`malformed netlink attribute at offset ${o}: length ${len}, ${b.length - o} bytes left`);
    }
    out.push({
      type: rawType & NLA_TYPE_MASK,
      nested: (rawType & NLA_F_NESTED) !== 0,
      data: b.subarray(o + NLA_HDRLEN, o + len),
    });
    o += align4(len);
  }
  return out;
}

/** Indexes attributes by type (the last one wins, as in the kernel's nla_parse). */
export function attrMap(attrs: readonly NlAttr[]): Map<number, NlAttr> {
  const m = new Map<number, NlAttr>();
  for (const a of attrs) m.set(a.type, a);
  return m;
}

/** Reads a u8 attribute payload. */
export function getU8(a: NlAttr): number {
  return a.data[0] ?? 0;
}

/** Reads a host-order u16 attribute payload. */
export function getU16(a: NlAttr): number {
  return view(a.data).getUint16(0, LE);
}

/** Reads a big-endian u16 attribute payload. */
export function getBe16(a: NlAttr): number {
  return view(a.data).getUint16(0, false);
}

/** Reads a host-order u32 attribute payload. */
export function getU32(a: NlAttr): number {
  return view(a.data).getUint32(0, LE);
}

/** Reads a host-order s32 attribute payload. */
export function getS32(a: NlAttr): number {
  return view(a.data).getInt32(0, LE);
}

/** Reads a string attribute payload, dropping the terminating NUL and anything after it. */
export function getStr(a: NlAttr): string {
  const nul = a.data.indexOf(0);
  return Buffer.from(a.data.buffer, a.data.byteOffset, nul < 0 ? a.data.length : nul).toString('utf8');
}

/** Copies an attribute payload out of the receive buffer (so callers may keep it). */
export function getBytes(a: NlAttr): Uint8Array {
  return Uint8Array.from(a.data);
}

/** Keeps the attributes whose type is not in `known`, as copied raw bytes (unknown attributes are never dropped). */
export function rawExtras(attrs: readonly NlAttr[], known: ReadonlySet<number>): Array<{ type: number; data: Uint8Array }> {
  return attrs.filter((a) => !known.has(a.type)).map((a) => ({ type: a.type, data: getBytes(a) }));
}

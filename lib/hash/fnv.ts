// The project's one stable name hash: FNV-1a over UTF-8 bytes (32-bit, and 64-bit in stableId), used wherever a name must be
// derived from arbitrary text (host veth names, nftables object names and element comments, the VTEP
// MAC). Not cryptographic: it only has to be stable across releases and collision-unlikely among a
// node's networks and attachments, and it avoids loading node:crypto (4-20 ms) on every plugin ADD.

/** FNV-1a 32-bit offset basis (draft-eastlake-fnv). */
export const FNV32_OFFSET = 0x811c9dc5;
/** FNV-1a 32-bit prime. */
export const FNV32_PRIME = 0x01000193;

/** One FNV-1a round: xor the byte in, multiply by the prime, modulo 2^32. */
export function fnv1a32Step(h: number, byte: number): number {
  return Math.imul(h ^ byte, FNV32_PRIME) >>> 0;
}

/** 32-bit FNV-1a of the UTF-8 text, as 8 hex digits. */
export function fnv1a32(text: string): string {
  let h = FNV32_OFFSET;
  for (const byte of Buffer.from(text, 'utf8')) h = fnv1a32Step(h, byte);
  return h.toString(16).padStart(8, '0');
}

/**
 * 64-bit FNV-1a of the UTF-8 text as `hexLen` hex digits, for names that want more bits than
 * fnv1a32 gives (nftables object names and rule tags derived from arbitrary text).
 */
export function stableId(text: string, hexLen = 12): string {
  let h = 0xcbf29ce484222325n;
  const prime = 0x100000001b3n;
  for (const byte of Buffer.from(text, 'utf8')) {
    h ^= BigInt(byte);
    h = (h * prime) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, '0').slice(0, hexLen);
}

// Short stable identifiers for nftables object names and rule tags, derived from arbitrary text.

/**
 * 64-bit FNV-1a of the UTF-8 text as `hexLen` hex digits. Not cryptographic: it only has to be
 * stable and collision-unlikely across a node's handful of networks and rule versions, and it
 * avoids loading node:crypto (4-20 ms) on every plugin ADD.
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

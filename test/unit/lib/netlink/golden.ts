// Golden-byte helpers for the netlink unit tests. Captures come from `strace -e trace=sendmsg -xx`
// of iproute2 in a scratch namespace (kernel 6.x, little-endian x86-64), pasted as \xNN strings.

/** Bytes from strace's "\x02\x18..." notation (use with String.raw). */
export function sx(s: string): Uint8Array {
  return Uint8Array.from(s.split('\\x').slice(1).map((h) => parseInt(h, 16)));
}

/** Bytes from space-separated hex ("02 18 00 00"). */
export function hex(s: string): Uint8Array {
  const t = s.trim();
  return t === '' ? new Uint8Array(0) : Uint8Array.from(t.split(/\s+/).map((h) => parseInt(h, 16)));
}

/** Space-separated hex of bytes, for readable assertion diffs. */
export function toHex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(' ');
}

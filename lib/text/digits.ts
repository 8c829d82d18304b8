// Small decimal numbers in text (prefix lengths, version parts), read without a regular expression:
// such checks run several times per plugin run, and V8 compiles an expression again, to machine
// code, on its second match.

/**
 * The value of `s` when it is 1 to `maxDigits` ASCII digits, else null. With `leadingZero` false a
 * number of two or more digits may not start with 0 ("0" itself is fine). Any namespace.
 */
export function parseDigits(s: string, maxDigits: number, leadingZero = true): number | null {
  if (s.length === 0 || s.length > maxDigits) return null;
  if (!leadingZero && s.length > 1 && s.charCodeAt(0) === 0x30) return null;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const d = s.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return null;
    n = n * 10 + d;
  }
  return n;
}

/** True when `s` is exactly `length` lower-case hexadecimal digits (a sha256 in hex: 64). Any namespace. */
export function isLowerHex(s: string, length: number): boolean {
  if (s.length !== length) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

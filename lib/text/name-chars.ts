// The characters no kernel name segment may hold (interface names, sysctl path segments): '/', ':',
// whitespace and control characters. A loop rather than a regular expression: these checks run a few
// times per plugin run, and V8 compiles an expression again, to machine code, on its second match.

/** True for '/', ':', a C0 control, space, DEL, or any other character JavaScript's `\s` matches. Any namespace. */
export function isNameBreakingChar(c: number): boolean {
  if (c <= 0x20 || c === 0x7f || c === 0x2f || c === 0x3a) return true;
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** True when `s` holds a character isNameBreakingChar refuses. */
export function hasNameBreakingChar(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (isNameBreakingChar(s.charCodeAt(i))) return true;
  return false;
}

/**
 * True when `s` is a letter or digit followed by letters, digits, '_', '.' and '-' (ASCII): the
 * charset of container IDs, network names and plugin types. Any namespace.
 */
export function isPlainName(s: string): boolean {
  if (s.length === 0 || !isAlnum(s.charCodeAt(0))) return false;
  for (let i = 1; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!isAlnum(c) && c !== 0x5f && c !== 0x2e && c !== 0x2d) return false;
  }
  return true;
}

function isAlnum(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

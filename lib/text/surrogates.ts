// Lone UTF-16 surrogates in strings that become kernel names or paths: JSON can carry one ("\ud800"),
// and encoding it for the kernel turns it into U+FFFD, another name than asked. A loop, not a regular
// expression: the one that says this needs look-around, and V8 compiles it twice in a plugin's run
// (bytecode on the first match, machine code on the second), about 60 us for a few short names.

/** True when `s` holds a high surrogate not followed by a low one, or a low one not after a high one. Any namespace. */
export function hasLoneSurrogate(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c > 0xdbff) return true; // a low surrogate that no high one opened
    const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
    if (next < 0xdc00 || next > 0xdfff) return true;
    i++; // a well-formed pair
  }
  return false;
}

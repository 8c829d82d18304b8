// Character-loop matchers for the JSON Schema patterns of the config schemas (lib/cni/schema-common.ts,
// plugins/bridge/schema.ts), which scripts/gen-validators.ts puts in the generated validators in place of
// `new RegExp(pattern, "u")`. V8 compiles a regular expression at its first exec, and every ADD runs
// each validator's patterns once: 2-5 compilations per start. Each matcher accepts exactly the strings
// its pattern does (test/unit/lib/cni/patterns.test.ts compares them). Pure; runs anywhere.

/** `^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`: a network name, container ID or plugin type. */
export { isPlainName } from '../text/name-chars.ts';

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** `^[0-9]+\.[0-9]+\.[0-9]+$`: three dot-separated runs of ASCII digits (a cniVersion's shape). */
export function isDottedTriple(s: string): boolean {
  let dots = 0;
  let run = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (isDigit(c)) {
      run++;
    } else if (c === 0x2e && run > 0 && dots < 2) {
      dots++;
      run = 0;
    } else {
      return false;
    }
  }
  return dots === 2 && run > 0;
}

/** `^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$`: a MAC address as six colon-separated hex pairs. */
export function isColonMac(s: string): boolean {
  if (s.length !== 17) return false;
  for (let i = 0; i < 17; i++) {
    const c = s.charCodeAt(i);
    if (i % 3 === 2 ? c !== 0x3a : !isHex(c)) return false;
  }
  return true;
}

/** The matcher of each pattern source that has one, by the pattern's exact text. */
export const PATTERN_MATCHERS: Readonly<Record<string, string>> = {
  '^[0-9]+\\.[0-9]+\\.[0-9]+$': 'isDottedTriple',
  '^[a-zA-Z0-9][a-zA-Z0-9_.-]*$': 'isPlainName',
  '^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$': 'isColonMac',
};

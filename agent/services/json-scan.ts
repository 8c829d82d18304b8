// Walking a large JSON text without building its object tree: the members of an object and the items
// of an array as index ranges, so that a caller parses only the small values it keeps (one set
// element at a time of `nft -j list table`, whose whole tree at 10,000 Services x 10 endpoints is
// ~210,000 elements, several times the text's size). Pure; RFC 8259 syntax, not validated beyond
// what finding the ends of values needs (each kept value goes through JSON.parse).

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;
const OPEN_ARRAY = 91;
const CLOSE_ARRAY = 93;

function bad(t: string, i: number, what: string): Error {
  return new Error(`JSON scan: ${what} at offset ${i} (${JSON.stringify(t.slice(i, i + 24))})`);
}

/** The index of the first non-whitespace character at or after i. */
export function skipSpace(t: string, i: number): number {
  for (; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9) break;
  }
  return i;
}

/** The index after the string whose opening quote is t[i]. */
function endOfString(t: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = t.indexOf('"', from);
    if (q < 0) throw bad(t, i, 'unterminated string');
    let slashes = 0;
    for (let b = q - 1; t.charCodeAt(b) === BACKSLASH; b--) slashes++;
    if (slashes % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** The index after the JSON value that starts at t[i] (no whitespace before it). */
export function endOfValue(t: string, i: number): number {
  const c = t.charCodeAt(i);
  if (c === QUOTE) return endOfString(t, i);
  if (c !== OPEN_OBJECT && c !== OPEN_ARRAY) {
    let j = i;
    for (; j < t.length; j++) {
      const d = t.charCodeAt(j);
      if (d === COMMA || d === CLOSE_OBJECT || d === CLOSE_ARRAY || d === 32 || d === 10 || d === 13 || d === 9) break;
    }
    if (j === i) throw bad(t, i, 'value expected');
    return j;
  }
  let depth = 0;
  for (let j = i; j < t.length;) {
    const d = t.charCodeAt(j);
    if (d === QUOTE) {
      j = endOfString(t, j);
      continue;
    }
    if (d === OPEN_OBJECT || d === OPEN_ARRAY) depth++;
    else if ((d === CLOSE_OBJECT || d === CLOSE_ARRAY) && --depth === 0) return j + 1;
    j++;
  }
  throw bad(t, i, 'unterminated value');
}

/** Calls fn(start, end) for each item of the array whose '[' is t[i]; returns the index after the array. */
export function eachItem(t: string, i: number, fn: (start: number, end: number) => void): number {
  if (t.charCodeAt(i) !== OPEN_ARRAY) throw bad(t, i, 'array expected');
  let j = skipSpace(t, i + 1);
  if (t.charCodeAt(j) === CLOSE_ARRAY) return j + 1;
  for (;;) {
    const end = endOfValue(t, j);
    fn(j, end);
    j = skipSpace(t, end);
    const c = t.charCodeAt(j);
    if (c === CLOSE_ARRAY) return j + 1;
    if (c !== COMMA) throw bad(t, j, "',' or ']' expected");
    j = skipSpace(t, j + 1);
  }
}

/** Calls fn(key, start, end) for each member of the object whose '{' is t[i] (start/end: the value's range); returns the index after the object. */
export function eachMember(t: string, i: number, fn: (key: string, start: number, end: number) => void): number {
  if (t.charCodeAt(i) !== OPEN_OBJECT) throw bad(t, i, 'object expected');
  let j = skipSpace(t, i + 1);
  if (t.charCodeAt(j) === CLOSE_OBJECT) return j + 1;
  for (;;) {
    if (t.charCodeAt(j) !== QUOTE) throw bad(t, j, 'member name expected');
    const keyEnd = endOfString(t, j);
    const key = JSON.parse(t.slice(j, keyEnd)) as string;
    j = skipSpace(t, keyEnd);
    if (t.charCodeAt(j) !== COLON) throw bad(t, j, "':' expected");
    const start = skipSpace(t, j + 1);
    const end = endOfValue(t, start);
    fn(key, start, end);
    j = skipSpace(t, end);
    const c = t.charCodeAt(j);
    if (c === CLOSE_OBJECT) return j + 1;
    if (c !== COMMA) throw bad(t, j, "',' or '}' expected");
    j = skipSpace(t, j + 1);
  }
}

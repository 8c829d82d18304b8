// Validation and formatting of every value that reaches an nft script: nothing from input is pasted raw.
import { parseIp } from '../ip/addr.ts';
import { invalidValue } from './errors.ts';
import type { NftAtom, NftFamily, NftKey } from './types.ts';

/** Longest comment nft accepts (nft 1.0.6: "comment too long, 128 characters maximum allowed"). */
export const NFT_COMMENT_MAX = 128;

/** Longest name we allow for tables, chains, sets and maps (the kernel allows 256, NFT_NAME_MAXLEN). */
export const NFT_NAME_MAX = 64;

// Bare words that are nft keywords fail to parse as names (measured on nft 1.0.6: a set named
// `ip`, `tcp` or `counter` is a syntax error). Keywords never contain '-' or digits, so a name must
// carry one of them; the few plain words we use ourselves are listed here after testing them.
const PLAIN_NAMES_OK = new Set(['weft', 'pods', 'masq', 'portmap', 'postrouting', 'prerouting', 'output']);
const NAME_RE = /^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$/;
const COMMENT_RE = /^[A-Za-z0-9_.:/@=+,-]+(?: [A-Za-z0-9_.:/@=+,-]+)*$/;
const MAC_RE = /^[0-9a-f]{2}(?::[0-9a-f]{2}){5}$/i;
const KEYWORDS = new Set(['tcp', 'udp', 'sctp', 'icmp', 'icmpv6', 'accept', 'drop', 'return', 'continue']);

/** Validates a family name (`ip`, `ip6`, `inet`, `bridge`). */
export function validateFamily(family: unknown): NftFamily {
  if (family === 'ip' || family === 'ip6' || family === 'inet' || family === 'bridge') return family;
  throw invalidValue('family', family, 'expected ip, ip6, inet or bridge');
}

/** Validates a table/chain/set/map name: lower-case word(s) joined by '-' or '_', not an nft keyword. */
export function validateName(field: string, name: unknown): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > NFT_NAME_MAX) {
    throw invalidValue(field, name, `expected a string of 1..${NFT_NAME_MAX} characters`);
  }
  if (!NAME_RE.test(name)) throw invalidValue(field, name, 'expected [a-z][a-z0-9]* words joined by - or _');
  if (!/[-_0-9]/.test(name) && !PLAIN_NAMES_OK.has(name)) {
    throw invalidValue(field, name, "a plain word may be an nft keyword; include '-', '_' or a digit");
  }
  return name;
}

/** Validates a comment (element, set, rule tag): safe charset, at most 128 characters; returns it quoted. */
export function formatComment(field: string, comment: unknown): string {
  if (typeof comment !== 'string' || comment.length === 0 || comment.length > NFT_COMMENT_MAX) {
    throw invalidValue(field, comment, `expected a string of 1..${NFT_COMMENT_MAX} characters`);
  }
  // No quotes, backslashes, '$', ';', '#' or newlines: the value stays one nft string token.
  if (!COMMENT_RE.test(comment)) throw invalidValue(field, comment, 'allowed: A-Z a-z 0-9 _ . : / @ = + , - and single spaces');
  return `"${comment}"`;
}

/** Formats an IPv4/IPv6 address or prefix (`10.0.0.0/16`), refusing zones and out-of-range lengths. */
export function formatAddress(field: string, value: string): string | undefined {
  const slash = value.indexOf('/');
  const addr = slash < 0 ? value : value.slice(0, slash);
  const bits = isIPv4(addr) ? 32 : isIPv6(addr) && !addr.includes('%') ? 128 : 0;
  if (bits === 0) return undefined;
  if (slash < 0) return addr.toLowerCase();
  const len = value.slice(slash + 1);
  if (!/^\d{1,3}$/.test(len) || Number(len) > bits) throw invalidValue(field, value, `prefix length must be 0..${bits}`);
  return `${addr.toLowerCase()}/${Number(len)}`;
}

/** Formats one atom of an element key/data: integer, address, prefix, MAC, protocol or verdict keyword. */
export function formatAtom(field: string, atom: unknown, opts: { allowName?: boolean } = {}): string {
  if (typeof atom === 'number') {
    if (Number.isInteger(atom) && atom >= 0 && atom <= 0xffffffff) return String(atom);
    throw invalidValue(field, atom, 'expected an integer 0..2^32-1');
  }
  if (typeof atom !== 'string') throw invalidValue(field, atom, 'expected a string or a number');
  const addr = formatAddress(field, atom);
  if (addr !== undefined) return addr;
  if (MAC_RE.test(atom)) return atom.toLowerCase();
  if (KEYWORDS.has(atom)) return atom;
  const verdict = /^(jump|goto) (.*)$/.exec(atom);
  if (verdict?.[1] !== undefined) return `${verdict[1]} ${validateName(field, verdict[2])}`;
  if (opts.allowName === true) return validateName(field, atom);
  throw invalidValue(field, atom, 'expected an address, prefix, MAC, integer, protocol or verdict');
}

/** Formats an element key or map data: atoms joined by ' . ' (nft concatenation). */
export function formatKey(field: string, key: NftKey): string {
  const atoms: readonly NftAtom[] = Array.isArray(key) ? key : [key as NftAtom];
  if (atoms.length === 0) throw invalidValue(field, key, 'expected at least one value');
  return atoms.map((a, i) => formatAtom(atoms.length > 1 ? `${field}[${i}]` : field, a)).join(' . ');
}

/** Validates a port number (1..65535) for inet_service keys. */
export function validatePort(field: string, port: unknown): number {
  if (typeof port === 'number' && Number.isInteger(port) && port >= 1 && port <= 65535) return port;
  throw invalidValue(field, port, 'expected an integer port 1..65535');
}

/** Validates a netns path for nsenter: absolute, no NUL or newline. */
export function validateNetnsPath(path: unknown): string {
  if (typeof path === 'string' && path.startsWith('/') && !/[\0\n]/.test(path) && path.length < 4096) return path;
  throw invalidValue('netnsPath', path, 'expected an absolute path');
}

// node:net's isIPv4/isIPv6 would cost 4-12 ms of module loading on every plugin start.
function isIPv4(s: string): boolean {
  return parseIp(s)?.family === 4;
}
function isIPv6(s: string): boolean {
  return parseIp(s)?.family === 6;
}

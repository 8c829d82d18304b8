// Rule expressions built from code literals plus validated values (a tagged template), never raw input.
import { invalidValue } from './errors.ts';
import { formatAtom } from './validate.ts';
import type { NftAtom } from './types.ts';

const BRAND: unique symbol = Symbol('NftExpr');

/** A rule body (without `comment`) whose interpolated values were all validated. */
export interface NftExpr {
  readonly [BRAND]: true;
  readonly text: string;
}

/** A value allowed inside `nftExpr`: an atom, a list (rendered as an anonymous set) or another NftExpr. */
export type NftExprValue = NftAtom | readonly NftAtom[] | NftExpr;

function isExpr(v: unknown): v is NftExpr {
  return typeof v === 'object' && v !== null && BRAND in v;
}

function formatValue(index: number, v: NftExprValue): string {
  const field = `expression value #${index}`;
  if (isExpr(v)) return v.text;
  if (Array.isArray(v)) {
    if (v.length === 0) throw invalidValue(field, v, 'an anonymous set needs at least one value');
    return `{ ${v.map((a: unknown) => formatAtom(field, a)).join(', ')} }`;
  }
  // Names (sets after '@', chains after jump) are allowed here; each still has to pass validateName.
  return formatAtom(field, v, { allowName: true });
}

/**
 * Tagged template for rule bodies: `nftExpr\`ip saddr @${set} ip daddr != ${cidr} masquerade\``.
 * Literal parts are our own code; each `${}` must be an address, prefix, integer, name, keyword or NftExpr.
 */
export function nftExpr(literals: TemplateStringsArray, ...values: NftExprValue[]): NftExpr {
  let text = literals[0] ?? '';
  values.forEach((v, i) => {
    text += formatValue(i, v) + (literals[i + 1] ?? '');
  });
  // Literals come from code, but a stray newline or ';' would split the transaction line: refuse it.
  if (/[\n;#"]/.test(text)) throw invalidValue('expression', text, 'must not contain newline, ";", "#" or quotes');
  return { [BRAND]: true, text: text.trim().replace(/\s+/g, ' ') };
}

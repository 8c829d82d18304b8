// The one reader of an error's errno name (node:fs, the native addon, netlink and netns errors all
// carry it as a string `code`), so callers neither cast nor confuse it with a CNI error's numeric code.
// Pure: loads no addon.

/** An error carrying an errno name, e.g. 'ENOENT'. */
export interface ErrnoError extends Error {
  code: string;
}

/** The errno name `e` carries (ENOENT, EEXIST, ENOTNETNS...), or undefined for any other value. */
export function errnoCode(e: unknown): string | undefined {
  if (!(e instanceof Error)) return undefined;
  const c = (e as { code?: unknown }).code;
  return typeof c === 'string' ? c : undefined;
}

/** True when `e` is an error carrying an errno name, optionally one of `codes`. */
export function isSysError(e: unknown, ...codes: string[]): e is ErrnoError {
  const c = errnoCode(e);
  return c !== undefined && (codes.length === 0 || codes.includes(c));
}

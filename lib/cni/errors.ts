// CniError and its constructors: the spec's well-known error codes plus weft's own (100+).
import type { ErrorDocument } from './types.ts';
import { errnoCode } from '../errno/errno.ts';

/** Error codes from the CNI spec ("Error" section); 100+ are plugin-specific, 999 is "unexpected". */
export const ErrorCode = {
  incompatibleVersion: 1,
  unsupportedField: 2,
  unknownContainer: 3,
  invalidEnv: 4,
  ioFailure: 5,
  decodeFailure: 6,
  invalidConfig: 7,
  tryAgainLater: 11,
  /** STATUS: the plugin cannot serve ADDs right now (spec 1.1.0). */
  pluginNotAvailable: 50,
  /** STATUS: a plugin it depends on is not available (spec 1.1.0). */
  limitedConnectivity: 51,
  /** weft: a delegated plugin was not found on CNI_PATH (callers may tolerate it on DEL). */
  pluginNotFound: 100,
  unexpected: 999,
} as const;

/** A failure reported to the runtime as `{cniVersion, code, msg, details}` on stdout. */
export class CniError extends Error {
  readonly code: number;
  readonly msg: string;
  readonly details: string;

  constructor(code: number, msg: string, details = '', options?: { cause?: unknown }) {
    super(details ? `${msg}: ${details}` : msg, options);
    this.name = 'CniError';
    this.code = code;
    this.msg = msg;
    this.details = details;
  }

  /** The stdout error document for the given cniVersion; details omitted when empty. */
  toJSON(cniVersion: string): ErrorDocument {
    const doc: ErrorDocument = { cniVersion, code: this.code, msg: this.msg };
    if (this.details) doc.details = this.details;
    return doc;
  }
}

/** Code 1: the config's cniVersion (or a prevResult's) is not one the plugin speaks. */
export function incompatibleVersion(msg: string, details = ''): CniError {
  return new CniError(ErrorCode.incompatibleVersion, msg, details);
}

/** Code 2: the config has a field the plugin does not support. */
export function unsupportedField(msg: string, details = ''): CniError {
  return new CniError(ErrorCode.unsupportedField, msg, details);
}

/** Code 3: the container is unknown or does not exist. */
export function unknownContainer(msg: string, details = ''): CniError {
  return new CniError(ErrorCode.unknownContainer, msg, details);
}

/** Code 4: a CNI_* environment variable is missing or invalid. */
export function invalidEnv(msg: string, details = ''): CniError {
  return new CniError(ErrorCode.invalidEnv, msg, details);
}

/** Code 5: an I/O failure (e.g. reading stdin, writing state). */
export function ioFailure(msg: string, details = '', cause?: unknown): CniError {
  return new CniError(ErrorCode.ioFailure, msg, details, { cause });
}

/** Code 6: stdin (or a delegate's output) could not be decoded. */
export function decodeFailure(msg: string, details = ''): CniError {
  return new CniError(ErrorCode.decodeFailure, msg, details);
}

/** Code 7: the network configuration is invalid. */
export function invalidConfig(msg: string, details = ''): CniError {
  return new CniError(ErrorCode.invalidConfig, msg, details);
}

/** Code 11: a transient condition; the runtime should retry later. */
export function tryAgainLater(msg: string, details = '', cause?: unknown): CniError {
  return new CniError(ErrorCode.tryAgainLater, msg, details, { cause });
}

/** A weft-specific error; code must be 100..998 (the spec reserves lower codes). */
export function weftError(code: number, msg: string, details = '', cause?: unknown): CniError {
  if (!Number.isInteger(code) || code < 100 || code > 998) {
    throw new RangeError(`weftError: code ${code} is outside 100..998`);
  }
  return new CniError(code, msg, details, { cause });
}

/** Any thrown value as a CniError: CniErrors pass through, an Error with a numeric `cniCode` keeps it, anything else becomes 999 with the cause. */
export function toCniError(e: unknown): CniError {
  if (e instanceof CniError) return e;
  // Lower layers (lib/netfilter) mark the errors whose CNI code they know, e.g. 11 for a stalled nft.
  const known = (e as { cniCode?: unknown } | null)?.cniCode;
  if (e instanceof Error && typeof known === 'number' && Number.isInteger(known) && known > 0) {
    return new CniError(known, e.message, '', { cause: e });
  }
  if (e instanceof Error) {
    const errno = errnoCode(e);
    const details = errno && !e.message.includes(errno) ? `${errno}: ${e.message}` : e.message;
    return new CniError(ErrorCode.unexpected, 'unexpected error', details, { cause: e });
  }
  return new CniError(ErrorCode.unexpected, 'unexpected error', String(e), { cause: e });
}

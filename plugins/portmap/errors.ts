// Portmap-specific error codes (CNI spec: 100+ belong to the plugin) and the helpers that build them.
import { weftError, type CniError } from '../../lib/cni/errors.ts';

/** Codes of failures that are neither config (7) nor unexpected (999). */
export const PortmapError = {
  /** A hostPort (protocol, hostIP, port) is already mapped to another container; nothing was changed. */
  conflict: 120,
  /** CHECK found a mapping missing or pointing elsewhere. */
  checkFailed: 121,
  /** A mapping needs a container address of a family the prevResult does not have. */
  noContainerIp: 122,
} as const;

/** Code 120: hostPort already taken. */
export function portConflict(msg: string, details = '', cause?: unknown): CniError {
  return weftError(PortmapError.conflict, msg, details, cause);
}

/** Code 121: CHECK mismatch. */
export function checkFailed(msg: string, details = ''): CniError {
  return weftError(PortmapError.checkFailed, msg, details);
}

/** Code 122: no container address to map to. */
export function noContainerIp(msg: string, details = ''): CniError {
  return weftError(PortmapError.noContainerIp, msg, details);
}

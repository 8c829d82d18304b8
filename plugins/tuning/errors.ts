// Tuning-specific error codes (CNI spec: 100+ belong to the plugin).
import { weftError, type CniError } from '../../lib/cni/errors.ts';

/** Codes of failures that are neither config (7) nor unexpected (999). */
export const TuningError = {
  /** CHECK found a value that differs from the config. */
  checkFailed: 140,
  /** The pod interface CNI_IFNAME does not exist in CNI_NETNS. */
  noInterface: 141,
} as const;

/** Code 140: CHECK mismatch. */
export function checkFailed(msg: string, details = ''): CniError {
  return weftError(TuningError.checkFailed, msg, details);
}

/** Code 141: no such interface in the pod. */
export function noInterface(msg: string, details = ''): CniError {
  return weftError(TuningError.noInterface, msg, details);
}

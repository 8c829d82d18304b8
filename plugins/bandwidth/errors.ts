// Bandwidth-specific error codes (CNI spec: 100+ belong to the plugin) and the helpers that build them.
import { weftError, type CniError } from '../../lib/cni/errors.ts';

/** Codes of failures that are neither config (7), missing netns (3) nor unexpected (999). */
export const BandwidthError = {
  /** The pod interface has no veth peer listed in prevResult: nothing to shape on. */
  noHostVeth: 130,
  /** CHECK found a qdisc, class, filter or the ifb missing or different. */
  checkFailed: 131,
} as const;

/** Code 130: no host-side veth to shape. */
export function noHostVeth(msg: string, details = ''): CniError {
  return weftError(BandwidthError.noHostVeth, msg, details);
}

/** Code 131: CHECK mismatch. */
export function checkFailed(msg: string, details = ''): CniError {
  return weftError(BandwidthError.checkFailed, msg, details);
}

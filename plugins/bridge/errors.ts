// Bridge-specific error codes (CNI spec: 100+ are the plugin's own) and the helpers that throw them.
import { CniError } from '../../lib/cni/errors.ts';

/** Codes of failures that are neither config (7) nor unexpected (999). */
export const BridgeError = {
  /** A link or address we need is taken by something else (non-bridge named like the bridge, pod ifname in use). */
  conflict: 110,
  /** The host port did not come up in time. */
  portNotUp: 111,
  /** CHECK found live state that differs from prevResult. */
  checkFailed: 112,
  /** IPAM returned something unusable (no addresses). */
  badIpamResult: 113,
} as const;

/** Code 110: a name or address is already used by something we must not touch. */
export function conflict(msg: string, details = ''): CniError {
  return new CniError(BridgeError.conflict, msg, details);
}

/** Code 112: CHECK mismatch. */
export function checkFailed(msg: string, details = ''): CniError {
  return new CniError(BridgeError.checkFailed, msg, details);
}

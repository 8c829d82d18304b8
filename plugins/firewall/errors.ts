// Firewall-specific error codes (CNI spec: 100+ belong to the plugin).
import { weftError, type CniError } from '../../lib/cni/errors.ts';

/** Codes of failures that are neither config (7) nor unexpected (999). */
export const FirewallError = {
  /** CHECK found a rule, hook or element missing. */
  checkFailed: 130,
  /** same-bridge and isolated need the bridge as prevResult's first interface. */
  noBridge: 131,
} as const;

/** Code 130: CHECK mismatch. */
export function checkFailed(msg: string, details = ''): CniError {
  return weftError(FirewallError.checkFailed, msg, details);
}

/** Code 131: no bridge interface in prevResult for ingressPolicy same-bridge. */
export function noBridge(msg: string, details = ''): CniError {
  return weftError(FirewallError.noBridge, msg, details);
}

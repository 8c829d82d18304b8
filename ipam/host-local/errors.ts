// host-local's own error codes (CNI spec: 100+ are plugin-specific). lib/cni uses 100 itself, so ours start at 110.
import { weftError } from '../../lib/cni/errors.ts';
import type { CniError } from '../../lib/cni/errors.ts';

/** Codes host-local reports beyond the spec's; stable, listed in ipam/host-local/README.md. */
export const HostLocalCode = {
  /** Every address of a range set is held. */
  rangeExhausted: 110,
  /** A requested address (CNI_ARGS IP=, args.cni.ips, runtimeConfig.ips) is already held. */
  requestedUnavailable: 111,
  /** A requested address lies in no range set, or two were requested from one set. */
  requestedNotInRange: 112,
  /** The attachment already holds an address in this range set (spec: no duplicate allocation). */
  duplicateAllocation: 113,
  /** A requested address is the range's gateway. */
  requestedIsGateway: 114,
} as const;

/** Code 110: no free address left in range set `index` (message names its ranges). */
export function rangeExhausted(index: number, ranges: string): CniError {
  return weftError(HostLocalCode.rangeExhausted, `no IP addresses available in range set ${index}: ${ranges}`, `range set ${index}: ${ranges}`);
}

/** Code 111: the requested address is held by someone (`otherNetwork`: under that network name). */
export function requestedUnavailable(ip: string, ranges: string, otherNetwork?: string): CniError {
  const details = otherNetwork === undefined ? `${ip} is already reserved` : `${ip} is already reserved under network ${otherNetwork} in the same data dir`;
  return weftError(HostLocalCode.requestedUnavailable, `requested IP address ${ip} is not available in range set ${ranges}`, details);
}

/** Code 112: requested addresses left over after every range set took at most one. */
export function requestedNotInRange(ips: readonly string[]): CniError {
  return weftError(HostLocalCode.requestedNotInRange, `failed to allocate all requested IPs: ${ips.join(' ')}`, 'each range set serves at most one requested address; these fit no remaining set');
}

/** Code 113: the attachment already holds `ip` from this range set. */
export function duplicateAllocation(ip: string, containerId: string, ifname: string): CniError {
  return weftError(HostLocalCode.duplicateAllocation, `${ip} has been allocated to ${containerId}, duplicate allocation is not allowed`, `attachment ${containerId}/${ifname}`);
}

/** Code 114: the requested address is the gateway of its range. */
export function requestedIsGateway(ip: string): CniError {
  return weftError(HostLocalCode.requestedIsGateway, `requested ip ${ip} is subnet's gateway`);
}

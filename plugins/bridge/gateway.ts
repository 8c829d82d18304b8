// isGateway: the gateway address on the bridge (node netns), a sticky bridge MAC and IP forwarding.
import type { IpConfig } from '../../lib/cni/types.ts';
import { isExists, isNotFound } from '../../lib/netlink/errors.ts';
import type { Rtnl } from '../../lib/netlink/rtnl.ts';
import { ensureSysctl } from '../../lib/netns/sysctl.ts';
import { parseCidr, cidrContains, parseIp } from '../../lib/ip/index.ts';
import { conflict } from './errors.ts';
import { broadcastOf } from '../../lib/ip/cidr.ts';
import { assertOldSubnetEmpty, type MoveContext } from './subnet-move.ts';
import { isSysError } from '../../lib/errno/errno.ts';

/** The gateway's address on the bridge: gateway IP with the pod address's prefix length. */
export function gatewayCidr(ip: IpConfig): string | undefined {
  if (ip.gateway === undefined) return undefined;
  return `${ip.gateway}/${ip.address.split('/')[1] ?? ''}`;
}

/**
 * Idempotent, in the node netns: puts `cidr` on the bridge. Another IPv4 address (or an overlapping IPv6
 * one) is replaced with forceAddress, as the reference; without it, when `move` is given, replaced only
 * if no pod is left on the old address's subnet (subnet-move.ts), else an error naming them, as it is
 * without `move`. Returns whether we added it.
 */
export function ensureGatewayAddr(rtnl: Rtnl, bridgeIndex: number, cidr: string, forceAddress: boolean, move?: MoveContext & { bridge: string; onMoved?: (oldCidr: string) => void }): boolean {
  const want = parseCidr(cidr);
  if (want === null) throw conflict('invalid gateway address', cidr);
  for (const a of rtnl.listAddrs({ family: want.addr.family, index: bridgeIndex })) {
    if (a.cidr === cidr) return false;
    const have = parseCidr(a.cidr);
    const addrOfA = parseIp(a.address);
    const overlaps = have !== null && addrOfA !== null && (cidrContains(have, want.addr) || cidrContains(want, addrOfA));
    if (want.addr.family === 4 || overlaps) {
      if (!forceAddress) {
        if (move === undefined) throw conflict(`bridge already has an IP address different from ${cidr}`, `has ${a.cidr}`);
        assertOldSubnetEmpty(rtnl, bridgeIndex, move.bridge, a.cidr, cidr, move);
      }
      try {
        rtnl.delAddr({ index: bridgeIndex, cidr: a.cidr });
        // A move (not forceAddress, which the reference never undoes) is undone if the ADD fails later.
        if (!forceAddress) move?.onMoved?.(a.cidr);
      } catch (e) {
        if (!isNotFound(e)) throw e; // a concurrent ADD moved it first
      }
    }
  }
  try {
    const brd = broadcastOf(cidr);
    rtnl.addAddr(brd === undefined ? { index: bridgeIndex, cidr, noDad: true } : { index: bridgeIndex, cidr, noDad: true, broadcast: brd });
  } catch (e) {
    if (!isExists(e)) throw e;
    return false;
  }
  return true;
}

/** Rollback of a move, in the node netns: `movedTo` leaves the bridge and `oldCidr` is back; idempotent. */
export function undoGatewayMove(rtnl: Rtnl, bridgeIndex: number, oldCidr: string, movedTo: string): void {
  try {
    rtnl.delAddr({ index: bridgeIndex, cidr: movedTo });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  try {
    const brd = broadcastOf(oldCidr);
    rtnl.addAddr(brd === undefined ? { index: bridgeIndex, cidr: oldCidr, noDad: true } : { index: bridgeIndex, cidr: oldCidr, noDad: true, broadcast: brd });
  } catch (e) {
    if (!isExists(e)) throw e;
  }
}

/**
 * Pins the bridge MAC to its current value: otherwise the bridge takes the lowest port MAC and the
 * gateway's MAC changes as pods come and go (net/bridge/br_stp_if.c br_stp_recalculate_bridge_id).
 */
export function pinBridgeMac(rtnl: Rtnl, bridgeIndex: number, mac: string): void {
  if (mac !== '') rtnl.setMac(bridgeIndex, mac);
}

/** True when the bridge has a port other than `ownPortIndex` (another pod, an uplink): it still needs its gateway and forwarding. */
export function bridgeHasOtherPorts(rtnl: Rtnl, bridgeIndex: number, ownPortIndex: number): boolean {
  return rtnl.listLinks().some((l) => l.master === bridgeIndex && l.index !== ownPortIndex);
}

/**
 * Rollback of a gateway address this ADD added, in the node netns: removed unless another port is on
 * the bridge (a concurrent ADD on the same subnet may rely on it by then). Idempotent.
 */
export function removeGatewayAddrIfUnused(rtnl: Rtnl, bridgeIndex: number, cidr: string, ownPortIndex: number): void {
  if (bridgeHasOtherPorts(rtnl, bridgeIndex, ownPortIndex)) return;
  try {
    rtnl.delAddr({ index: bridgeIndex, cidr });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

const FORWARDING: Record<4 | 6, string> = { 4: 'net/ipv4/ip_forward', 6: 'net/ipv6/conf/all/forwarding' };

/** Idempotent, in the node netns: turns on forwarding for the families in use; returns the sysctls it changed (for rollback). */
export function ensureForwarding(families: ReadonlySet<4 | 6>): string[] {
  const changed: string[] = [];
  for (const family of [4, 6] as const) {
    if (!families.has(family)) continue;
    try {
      if (ensureSysctl(FORWARDING[family], 1)) changed.push(FORWARDING[family]);
    } catch (e) {
      // IPv6 may be disabled (no net/ipv6 tree): nothing to forward then.
      if (family === 4 || !isSysError(e, 'ENOENT')) throw e;
    }
  }
  return changed;
}

/**
 * Rollback of ensureForwarding, in the node netns: the sysctls it turned on go back to 0 unless another
 * port is on the bridge. A failed ADD leaves forwarding as it found it (issue 20: a failed ADD changes nothing).
 */
export function restoreForwarding(rtnl: Rtnl, bridgeIndex: number, ownPortIndex: number, changed: readonly string[]): void {
  if (changed.length === 0 || bridgeHasOtherPorts(rtnl, bridgeIndex, ownPortIndex)) return;
  for (const name of changed) ensureSysctl(name, 0);
}

// The "already has an IP address different from" trap: after the node's subnet changes (a new
// flannel lease), the bridge still carries the old gateway address and every ADD fails until
// someone runs `ip addr flush dev cni0`. Here, in the node netns, the bridge's address moves to the
// new gateway when no pod is left on the old subnet, and the ADD fails naming the pods otherwise.
//
// Who is left on the old subnet: with host-local IPAM, its reservations (lib/attach/host-local-list.ts)
// in every network directory, since several networks may share one bridge. Bridge ports are not
// asked then: a pod added concurrently on the new subnet is a port too. Without host-local there is no record of addresses, so any other port blocks the move.
import { DEFAULT_DATA_DIR } from '../../lib/attach/host-local-files.ts';
import { listAllHeld } from '../../lib/attach/host-local-list.ts';
import { cidrContains, parseCidr, parseIp, type Cidr, type IpAddr } from '../../lib/ip/index.ts';
import type { Rtnl } from '../../lib/netlink/rtnl.ts';
import { conflict } from './errors.ts';

/** A pod still holding an address in the old subnet. */
export interface OldSubnetHolder {
  /** The address (host-local) or the bridge port's name (no host-local). */
  what: string;
  containerId?: string;
  ifName?: string;
}

/** What the move needs to know beyond the bridge: the IPAM config and this ADD's own veth. */
export interface MoveContext {
  ipam: { type: string; [k: string]: unknown } | undefined;
  containerId: string;
  /** This ADD's host veth, already a port of the bridge. */
  ownPortIndex: number;
}

/** Addresses inside `old` held in host-local's dataDir (every network's directory); skips `ownId`. */
export function hostLocalHolders(dataDir: string, old: Cidr, ownId: string): OldSubnetHolder[] {
  return listAllHeld(dataDir)
    .filter((h) => h.containerId !== ownId && cidrContains(old, parseIp(h.ip) as IpAddr))
    .map((h) => ({ what: h.ip, containerId: h.containerId, ifName: h.ifname ?? '' }));
}

/** Ports of the bridge other than this ADD's veth, by name. */
export function otherPorts(rtnl: Rtnl, bridgeIndex: number, ownPortIndex: number): OldSubnetHolder[] {
  return rtnl.listLinks().filter((l) => l.master === bridgeIndex && l.index !== ownPortIndex).map((l) => ({ what: l.name }));
}

/**
 * Throws code 110 naming the pods left on the bridge's old address `have` (bridge `name`, wanted
 * `want`); returns when none is left and the address may be replaced.
 */
export function assertOldSubnetEmpty(rtnl: Rtnl, bridgeIndex: number, name: string, have: string, want: string, ctx: MoveContext): void {
  const old = parseCidr(have);
  if (old === null) return;
  const hostLocal = ctx.ipam?.type === 'host-local';
  const dataDir = typeof ctx.ipam?.['dataDir'] === 'string' ? ctx.ipam['dataDir'] : DEFAULT_DATA_DIR;
  const holders = hostLocal ? hostLocalHolders(dataDir, old, ctx.containerId) : otherPorts(rtnl, bridgeIndex, ctx.ownPortIndex);
  if (holders.length === 0) return;
  const shown = holders.slice(0, 10).map((h) => (h.containerId !== undefined ? `${h.what} (container ${h.containerId}${h.ifName ? ` ${h.ifName}` : ''})` : h.what));
  const more = holders.length > shown.length ? `, and ${holders.length - shown.length} more` : '';
  const whose = hostLocal ? `address(es) in ${have} are still held under ${dataDir}` : `port(s) besides this pod are still attached`;
  throw conflict(
    `bridge ${name} already has an IP address different from ${want}: it has ${have} from the node's previous subnet, and ${holders.length} pod ${whose}`,
    `${shown.join(', ')}${more}. Delete those pods (if their containers are gone, CNI GC or removing their host-local files frees the addresses) and the next ADD moves ${name} to ${want}; forceAddress: true replaces the address at once, cutting those pods off`,
  );
}

// The bridge device in the node's netns: create it once, keep it up, refuse a non-bridge with its name.
import { isExists, isNotFound } from '../../lib/netlink/errors.ts';
import { IFF_PROMISC, type Link } from '../../lib/netlink/link.ts';
import type { Rtnl } from '../../lib/netlink/rtnl.ts';
import { ensureSysctl, readSysctl, writeSysctl } from '../../lib/netns/sysctl.ts';
import type { BridgeConfig } from './config.ts';
import { conflict } from './errors.ts';
import { isSysError } from '../../lib/errno/errno.ts';

/** Writes a per-interface sysctl when the file exists (IPv6 may be disabled: no net/ipv6 tree); returns whether it wrote. */
export function ensureIfSysctl(name: string, value: number): boolean {
  try {
    return ensureSysctl(name, value);
  } catch (e) {
    if (!isSysError(e, 'ENOENT')) throw e;
    return false;
  }
}

/** Writes a per-interface sysctl (without reading it first) when the file exists (IPv6 may be disabled). */
export function setIfSysctl(name: string, value: number): void {
  try {
    writeSysctl(name, value);
  } catch (e) {
    if (!isSysError(e, 'ENOENT')) throw e;
  }
}

/** What ensureBridge changed on a bridge it did not create (a failed ADD puts it back: restoreBridge). */
export interface BridgeChanges {
  /** accept_ra was turned off (it was 1 or 2: put back as read). */
  acceptRa?: string;
  promisc?: boolean;
  up?: boolean;
}

/**
 * Idempotent, in the node netns (rtnl's): returns the bridge `cfg.bridge`, creating it (with cfg.mtu)
 * when absent; sets accept_ra=0 (a pod network bridge must not autoconfigure from pods' RAs), promisc
 * when asked, and up. `created` tells the caller whether this call made it (the reference never deletes it).
 */
export function ensureBridge(rtnl: Rtnl, cfg: Pick<BridgeConfig, 'bridge' | 'mtu' | 'promiscMode'>): { link: Link; created: boolean; changes: BridgeChanges } {
  let link = rtnl.getLink(cfg.bridge);
  let created = false;
  if (link === null) {
    try {
      rtnl.addBridge(cfg.mtu > 0 ? { name: cfg.bridge, mtu: cfg.mtu } : { name: cfg.bridge });
      created = true;
    } catch (e) {
      if (!isExists(e)) throw e; // a concurrent ADD made it first: use theirs
    }
    link = rtnl.getLink(cfg.bridge);
    if (link === null) throw conflict(`bridge ${cfg.bridge} vanished while being created`);
  }
  if (link.kind !== 'bridge') {
    throw conflict(`${JSON.stringify(cfg.bridge)} already exists but is not a bridge`, `kind ${link.kind ?? 'unknown'}`);
  }
  const changes: BridgeChanges = {};
  const acceptRa = `net/ipv6/conf/${cfg.bridge}/accept_ra`;
  if (created) setIfSysctl(acceptRa, 0); // a new bridge: nothing to put back, no read needed
  else {
    const old = readIfSysctl(acceptRa); // undefined: no IPv6 on this node
    if (old !== undefined && old.trim() !== '0') {
      setIfSysctl(acceptRa, 0);
      changes.acceptRa = old;
    }
  }
  if (cfg.promiscMode && (link.flags & IFF_PROMISC) === 0) {
    rtnl.setPromisc(link.index, true);
    changes.promisc = true;
  }
  if (!link.up) {
    rtnl.setLinkUp(link.index);
    changes.up = true;
  }
  return { link, created, changes };
}

function readIfSysctl(name: string): string | undefined {
  try {
    return readSysctl(name);
  } catch {
    return undefined;
  }
}

/**
 * ADD's rollback on a bridge it did not create, in the node netns: undoes `changes` unless a port other
 * than `ownPortIndex` is on the bridge (a concurrent ADD may rely on the bridge as it is now).
 */
export function restoreBridge(rtnl: Rtnl, index: number, ownPortIndex: number, changes: BridgeChanges, name: string): void {
  if (rtnl.listLinks().some((l) => l.master === index && l.index !== ownPortIndex)) return;
  if (changes.acceptRa !== undefined) ensureIfSysctl(`net/ipv6/conf/${name}/accept_ra`, Number(changes.acceptRa));
  if (changes.promisc === true) rtnl.setPromisc(index, false);
  if (changes.up === true) rtnl.setLinkDown(index);
}

/**
 * ADD's rollback of a bridge it created, in the node netns: removed only while no link is enslaved to
 * it (a concurrent ADD may have attached a pod meanwhile; that ADD then owns its use of the bridge).
 */
export function removeBridgeIfUnused(rtnl: Rtnl, index: number): void {
  if (rtnl.listLinks().some((l) => l.master === index)) return;
  try {
    rtnl.deleteLink(index);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

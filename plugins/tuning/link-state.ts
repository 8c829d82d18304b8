// The pod interface's tunables read and set over rtnetlink, and sysctls through /proc/sys, all in
// the pod's netns (the Rtnl socket was opened there; sysctl calls must run inside withNetns).
import { invalidConfig } from '../../lib/cni/errors.ts';
import { IFF_ALLMULTI, IFF_PROMISC, type Link } from '../../lib/netlink/link.ts';
import type { Rtnl } from '../../lib/netlink/rtnl.ts';
import { readSysctl, writeSysctl } from '../../lib/netns/sysctl.ts';
import type { TuningConfig } from './config.ts';
import type { SavedState } from './state.ts';
import { errnoCode } from '../../lib/errno/errno.ts';

/** The tunables of a link as listed. */
export interface LinkTunables {
  mac: string;
  mtu: number;
  promisc: boolean;
  allmulti: boolean;
  txQLen?: number;
}

/** Reads the tunables from a listed link. Pure. */
export function tunablesOf(link: Link): LinkTunables {
  const out: LinkTunables = { mac: link.mac, mtu: link.mtu, promisc: (link.flags & IFF_PROMISC) !== 0, allmulti: (link.flags & IFF_ALLMULTI) !== 0 };
  if (link.txqlen !== undefined) out.txQLen = link.txqlen;
  return out;
}

/** True when the config changes the link itself (then the interface must exist); sysctls alone do not need it, as in the reference. */
export function needsLink(cfg: TuningConfig): boolean {
  return cfg.mac !== undefined || cfg.promisc || cfg.mtu !== 0 || cfg.allmulti !== undefined || cfg.txQLen !== undefined;
}

/**
 * The values ADD is about to replace (pod netns, inside withNetns: sysctls are read here, so a
 * missing key fails before anything changed). Only what the config sets is saved; `link` is null
 * for a sysctl-only config.
 */
export function captureState(cfg: TuningConfig, link: LinkTunables | null): SavedState {
  const s: SavedState = { network: cfg.name };
  if (link !== null) {
    if (cfg.mac !== undefined) s.mac = link.mac;
    if (cfg.promisc) s.promisc = link.promisc;
    if (cfg.mtu !== 0) s.mtu = link.mtu;
    if (cfg.allmulti !== undefined) s.allmulti = link.allmulti;
    if (cfg.txQLen !== undefined && link.txQLen !== undefined) s.txQLen = link.txQLen;
  }
  if (cfg.sysctls.length > 0) s.sysctl = Object.fromEntries(cfg.sysctls.map((x) => [x.name, refused(x.key, 'read', () => readSysctl(x.name))]));
  return s;
}

// What the kernel says about a value or key that cannot be (EINVAL, ERANGE, ...): the config's
// fault, code 7 naming the key; anything else stays unexpected (999).
const CONFIG_ERRNOS = new Set(['ENOENT', 'EINVAL', 'ERANGE', 'EACCES', 'EPERM', 'EOPNOTSUPP', 'EADDRNOTAVAIL', 'EISDIR', 'ENOTDIR']);

/** Runs one kernel step; a refusal of the configured key or value becomes code 7 naming `key`. */
export function refused<T>(key: string, what: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    const code = errnoCode(e);
    if (code !== undefined && CONFIG_ERRNOS.has(code)) {
      throw invalidConfig(`invalid configuration: the pod's kernel refused to ${what} ${key}`, e instanceof Error ? e.message : String(e));
    }
    throw e;
  }
}

/** Applies the config, in the reference's order: sysctls, mac, promisc, mtu, allmulti, txQLen (pod netns, inside withNetns; link steps need `index`). */
export function applyTuning(rtnl: Rtnl, index: number | null, cfg: TuningConfig): void {
  for (const s of cfg.sysctls) refused(`sysctl ${s.key}`, 'set', () => writeSysctl(s.name, s.value));
  if (index === null) return;
  const mac = cfg.mac;
  if (mac !== undefined) refused('mac', 'set', () => rtnl.setMac(index, mac));
  if (cfg.promisc) refused('promisc', 'set', () => rtnl.setPromisc(index, true));
  if (cfg.mtu !== 0) refused('mtu', 'set', () => rtnl.setMtu(index, cfg.mtu));
  const allmulti = cfg.allmulti;
  if (allmulti !== undefined) refused('allmulti', 'set', () => rtnl.setAllmulti(index, allmulti));
  const txQLen = cfg.txQLen;
  if (txQLen !== undefined) refused('txQLen', 'set', () => rtnl.setTxQLen(index, txQLen));
}

/** Puts saved values back, each independently (pod netns, inside withNetns; link values only with `index`); returns what failed. */
export function restoreTuning(rtnl: Rtnl, index: number | null, s: SavedState): string[] {
  const failed: string[] = [];
  const step = (what: string, fn: () => void): void => {
    try {
      fn();
    } catch (e) {
      failed.push(`${what}: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  // MTU before MAC as the reference; each independent so one refusal does not keep the others.
  if (index !== null) {
    if (typeof s.mtu === 'number' && s.mtu !== 0) step('mtu', () => rtnl.setMtu(index, s.mtu ?? 0));
    if (typeof s.mac === 'string' && s.mac !== '') step('mac', () => rtnl.setMac(index, s.mac ?? ''));
    if (typeof s.promisc === 'boolean') step('promisc', () => rtnl.setPromisc(index, s.promisc === true));
    if (typeof s.allmulti === 'boolean') step('allmulti', () => rtnl.setAllmulti(index, s.allmulti === true));
    if (typeof s.txQLen === 'number') step('txQLen', () => rtnl.setTxQLen(index, s.txQLen ?? 0));
  }
  for (const [name, value] of Object.entries(s.sysctl ?? {})) {
    // Only names that still pass the net.* check: the file could have been edited.
    if (typeof value === 'string' && name.startsWith('net/')) step(`sysctl ${name}`, () => writeSysctl(name, value));
  }
  return failed;
}

/** Differences between the config and the live link/sysctls, as the reference's CHECK sees them (pod netns, inside withNetns). */
export function findTuningProblems(cfg: TuningConfig, link: LinkTunables): string[] {
  const p: string[] = [];
  for (const s of cfg.sysctls) {
    const cur = refused(s.key, 'read', () => readSysctl(s.name));
    if (cur !== s.value) p.push(`sysctl ${s.key} is ${JSON.stringify(cur)}, configured ${JSON.stringify(s.value)}`);
  }
  if (cfg.mac !== undefined && cfg.mac !== link.mac) p.push(`mac is ${link.mac}, configured ${cfg.mac}`);
  // The reference checks promisc both ways: an unset promisc expects it off.
  if (cfg.promisc !== link.promisc) p.push(`promisc is ${link.promisc}, configured ${cfg.promisc}`);
  if (cfg.mtu !== 0 && cfg.mtu !== link.mtu) p.push(`mtu is ${link.mtu}, configured ${cfg.mtu}`);
  if (cfg.allmulti !== undefined && cfg.allmulti !== link.allmulti) p.push(`allmulti is ${link.allmulti}, configured ${cfg.allmulti}`);
  if (cfg.txQLen !== undefined && link.txQLen !== undefined && cfg.txQLen !== link.txQLen) p.push(`txQLen is ${link.txQLen}, configured ${cfg.txQLen}`);
  return p;
}

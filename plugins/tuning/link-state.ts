// The pod interface's tunables read and set over rtnetlink, and sysctls through /proc/sys, all in
// the pod's netns (the Rtnl socket was opened there; sysctl calls must run inside withNetns).
import { IFLA_TXQLEN } from '../../lib/netlink/constants.ts';
import { IFF_ALLMULTI, IFF_PROMISC, type Link } from '../../lib/netlink/link.ts';
import type { Rtnl } from '../../lib/netlink/rtnl.ts';
import { readSysctl, writeSysctl } from '../../lib/netns/sysctl.ts';
import type { TuningConfig } from './config.ts';
import type { SavedState } from './state.ts';

/** The tunables of a link as listed. */
export interface LinkTunables {
  mac: string;
  mtu: number;
  promisc: boolean;
  allmulti: boolean;
  txQLen?: number;
}

/** Reads the tunables from a listed link (IFLA_TXQLEN is kept raw in `extra`). Pure. */
export function tunablesOf(link: Link): LinkTunables {
  const tx = link.extra.find((x) => x.type === IFLA_TXQLEN);
  const out: LinkTunables = { mac: link.mac, mtu: link.mtu, promisc: (link.flags & IFF_PROMISC) !== 0, allmulti: (link.flags & IFF_ALLMULTI) !== 0 };
  if (tx !== undefined && tx.data.length >= 4) out.txQLen = Buffer.from(tx.data).readUInt32LE(0);
  return out;
}

/**
 * The values ADD is about to replace (pod netns, inside withNetns: sysctls are read here, so a
 * missing key fails before anything changed). Only what the config sets is saved.
 */
export function captureState(cfg: TuningConfig, link: LinkTunables): SavedState {
  const s: SavedState = { network: cfg.name };
  if (cfg.mac !== undefined) s.mac = link.mac;
  if (cfg.promisc) s.promisc = link.promisc;
  if (cfg.mtu !== 0) s.mtu = link.mtu;
  if (cfg.allmulti !== undefined) s.allmulti = link.allmulti;
  if (cfg.txQLen !== undefined && link.txQLen !== undefined) s.txQLen = link.txQLen;
  if (cfg.sysctls.length > 0) s.sysctl = Object.fromEntries(cfg.sysctls.map((x) => [x.name, readSysctl(x.name)]));
  return s;
}

/** Applies the config, in the reference's order: sysctls, mac, promisc, mtu, allmulti, txQLen (pod netns, inside withNetns). */
export function applyTuning(rtnl: Rtnl, index: number, cfg: TuningConfig): void {
  for (const s of cfg.sysctls) writeSysctl(s.name, s.value);
  if (cfg.mac !== undefined) rtnl.setMac(index, cfg.mac);
  if (cfg.promisc) rtnl.setPromisc(index, true);
  if (cfg.mtu !== 0) rtnl.setMtu(index, cfg.mtu);
  if (cfg.allmulti !== undefined) rtnl.setAllmulti(index, cfg.allmulti);
  if (cfg.txQLen !== undefined) rtnl.setTxQLen(index, cfg.txQLen);
}

/** Puts saved values back, each independently (pod netns, inside withNetns); returns what failed. */
export function restoreTuning(rtnl: Rtnl, index: number, s: SavedState): string[] {
  const failed: string[] = [];
  const step = (what: string, fn: () => void): void => {
    try {
      fn();
    } catch (e) {
      failed.push(`${what}: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  // MTU before MAC as the reference; each independent so one refusal does not keep the others.
  if (typeof s.mtu === 'number' && s.mtu !== 0) step('mtu', () => rtnl.setMtu(index, s.mtu ?? 0));
  if (typeof s.mac === 'string' && s.mac !== '') step('mac', () => rtnl.setMac(index, s.mac ?? ''));
  if (typeof s.promisc === 'boolean') step('promisc', () => rtnl.setPromisc(index, s.promisc === true));
  if (typeof s.allmulti === 'boolean') step('allmulti', () => rtnl.setAllmulti(index, s.allmulti === true));
  if (typeof s.txQLen === 'number') step('txQLen', () => rtnl.setTxQLen(index, s.txQLen ?? 0));
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
    const cur = readSysctl(s.name);
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

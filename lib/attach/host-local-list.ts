// A read-only listing of host-local's reservations, for the plugins and tools that must know who
// holds which address without allocating (bridge's subnet move, weft doctor, host-local's check of
// the other networks in its data dir). Takes no lock: a
// reservation appears whole (link(2) of a finished file) and disappears whole (unlink), so a
// listing may miss a concurrent change but never sees half of one. Runs in any netns.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isSysError } from '../errno/errno.ts';
import { cidrContains, parseCidr, parseIp } from '../ip/index.ts';
import { INDEX_DIR, parseHolder, reservationKey, type Holder } from './host-local-files.ts';

/** One reservation file as found on disk. */
export interface HeldAddress extends Holder {
  readonly network: string;
  /** The address in canonical text (as host-local names the files it writes). */
  readonly ip: string;
  /** The file's path (its name may be a non-canonical spelling written by hand). */
  readonly path: string;
}

/** The network directories under `dataDir`, sorted; an absent dataDir has none. */
export function listNetworks(dataDir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dataDir, { withFileTypes: true });
  } catch (e) {
    if (isSysError(e, 'ENOENT', 'ENOTDIR')) return [];
    throw e;
  }
  return entries.filter((d) => d.isDirectory() && d.name !== INDEX_DIR).map((d) => d.name).sort();
}

/**
 * The reservations of `network` under `dataDir`, sorted by file name. Empty files (a reference
 * binary killed mid-write, which host-local removes under its lock) and files gone meanwhile are
 * skipped; an absent network directory holds none.
 */
export function listHeld(dataDir: string, network: string): HeldAddress[] {
  const dir = join(dataDir, network);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    if (isSysError(e, 'ENOENT', 'ENOTDIR')) return [];
    throw e;
  }
  const out: HeldAddress[] = [];
  for (const name of names.sort()) {
    const ip = reservationKey(name);
    if (ip === null) continue;
    const path = join(dir, name);
    let content: string;
    try {
      content = readFileSync(path, 'utf8');
    } catch (e) {
      if (isSysError(e, 'ENOENT', 'EISDIR')) continue; // released meanwhile, or not a file
      throw e;
    }
    const holder = parseHolder(content);
    if (holder !== null) out.push({ network, ip, path, containerId: holder.containerId, ifname: holder.ifname });
  }
  return out;
}

/** Every reservation of every network under `dataDir` (several networks may share one bridge). */
export function listAllHeld(dataDir: string): HeldAddress[] {
  return listNetworks(dataDir).flatMap((n) => listHeld(dataDir, n));
}

/**
 * The addresses `network` holds under `dataDir` (canonical text, sorted), from the file names alone:
 * no reservation is opened, so an empty one (a reference binary killed mid-write, removed only by
 * that network's own lock holder) counts as held. An absent network directory holds none.
 */
export function listHeldNames(dataDir: string, network: string): string[] {
  let names: string[];
  try {
    names = readdirSync(join(dataDir, network));
  } catch (e) {
    if (isSysError(e, 'ENOENT', 'ENOTDIR')) return [];
    throw e;
  }
  const out: string[] = [];
  for (const name of names) {
    const ip = reservationKey(name);
    if (ip !== null) out.push(ip);
  }
  return out.sort();
}

/**
 * Whether `network` under `dataDir` holds `ip` (canonical text, as both host-local binaries name
 * their files): one stat, so an allocator can ask about each candidate instead of listing the
 * directory. An empty reservation counts as held.
 */
export function holdsAddress(dataDir: string, network: string, ip: string): boolean {
  return existsSync(join(dataDir, network, ip));
}

/** One network's addresses inside a subnet (networksHoldingIn). */
export interface NetworkInSubnet {
  readonly network: string;
  readonly ips: readonly string[];
}

/**
 * The networks under `dataDir` holding addresses inside `subnet` (a CIDR), each with those
 * addresses, sorted by network. Two or more entries mean two network names allocate from one
 * subnet (kube-flannel's `cbr0` records beside another name after a migration): weft doctor's check.
 */
export function networksHoldingIn(dataDir: string, subnet: string): NetworkInSubnet[] {
  const c = parseCidr(subnet);
  if (c === null) throw new Error(`networksHoldingIn: ${JSON.stringify(subnet)} is not a CIDR`);
  const out: NetworkInSubnet[] = [];
  for (const network of listNetworks(dataDir)) {
    const ips = listHeldNames(dataDir, network).filter((t) => {
      const a = parseIp(t);
      return a !== null && cidrContains(c, a);
    });
    if (ips.length > 0) out.push({ network, ips });
  }
  return out;
}

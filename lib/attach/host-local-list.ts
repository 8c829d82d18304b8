// A read-only listing of host-local's reservations, for the plugins and tools that must know who
// holds which address without allocating (bridge's subnet move, weft doctor). Takes no lock: a
// reservation appears whole (link(2) of a finished file) and disappears whole (unlink), so a
// listing may miss a concurrent change but never sees half of one. Runs in any netns.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isSysError } from '../errno/errno.ts';
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

// host-local's on-disk contract, in the reference's layout so both binaries share one directory:
// <dataDir>/<network>/<ip> holding "<containerID>\r\n<ifname>", last_reserved_ip.<set index>, the
// flock file `lock`, our scratch files, and our holder index beside the network directories. The
// one writer (ipam/host-local) and every reader (bridge's subnet move, weft doctor) use these
// names and parseHolder/formatHolder, so they cannot drift apart. Pure: no netns, no I/O.
import { formatIp, normalizeIp, parseIp } from '../ip/index.ts';

/** Where the reference keeps its files when the config names no dataDir. */
export const DEFAULT_DATA_DIR = '/var/lib/cni/networks';
/** The regular file each network directory is flocked through (the reference's go-filemutex). */
export const LOCK_FILE = 'lock';
/** `last_reserved_ip.<range set index>`: where round-robin allocation continues. */
export const LAST_RESERVED_PREFIX = 'last_reserved_ip.';
/**
 * Our scratch files: never a valid IP, so the reference's GetByID ignores them, and only ever
 * created under the lock, so any seen by a lock holder belongs to a writer that was killed.
 */
export const TEMP_PREFIX = '.weft-tmp-';
/** The directory (under dataDir, beside the networks) of our holder-index cache, `<network>.json`. */
export const INDEX_DIR = '.weft-index';

/** Who holds an address. `ifname` is null for files written by pre-0.7 reference versions (ID only). */
export interface Holder {
  readonly containerId: string;
  readonly ifname: string | null;
}

/** The reference's file content for a holder: `<containerID>\r\n<ifname>`. */
export function formatHolder(containerId: string, ifname: string): string {
  return `${containerId.trim()}\r\n${ifname}`;
}

/** Parses reservation content (trimmed like the reference); an ID alone is the legacy form; null when empty. */
export function parseHolder(content: string): Holder | null {
  const t = content.trim();
  if (t === '') return null;
  const i = t.indexOf('\r\n');
  if (i < 0) return { containerId: t, ifname: null };
  return { containerId: t.slice(0, i), ifname: t.slice(i + 2) };
}

/**
 * The canonical address text of a reservation file name (the name the writer gives the address),
 * or null when `name` is not an address: the lock, last_reserved_ip.N, scratch or foreign files.
 * Dotted quads without leading zeros are already canonical (that is all parseIp accepts); IPv6 and
 * mapped names are re-formatted the way Go prints them.
 */
export function reservationKey(name: string): string | null {
  const c = name.charCodeAt(0);
  const maybeV4 = c >= 48 && c <= 57 && !name.includes(':');
  if (!maybeV4 && !name.includes(':')) return null;
  const ip = parseIp(name);
  if (ip === null) return null;
  return maybeV4 ? name : formatIp(normalizeIp(ip));
}

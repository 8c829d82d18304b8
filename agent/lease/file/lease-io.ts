// On-disk form of the file store: DIR/<10.244.3.0-24> (dual stack DIR/<10.244.3.0-24&fd00:0:0:3::-64>,
// flannel's key) holds flannel's lease JSON plus
// "Expiration" (RFC 3339). Files are only ever replaced whole (temp + rename) or created
// exclusively (temp + link), so a reader never sees a half-written lease.
import { linkSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomicSync, writeTempFileSync } from '../../../lib/fs/atomic-write.ts';
import { type LeaseKey, formatLeaseAttrs, formatSubnetKey, parseLeaseAttrs, parseLeaseKey } from '../lease-json.ts';
import { type Lease, leaseKey } from '../store.ts';
import { formatIsoTime } from '../../../lib/time/format.ts';

/** Renders a lease file: flannel's lease JSON with an added "Expiration". */
export function formatLeaseFile(lease: Lease): string {
  return `${formatLeaseAttrs(lease, { Expiration: formatIsoTime(lease.expiration) })}\n`;
}

/** Parses a lease file named `key` (a subnet, or flannel's key form); throws on anything malformed (a missing Expiration counts as expired). */
export function parseLeaseFile(key: string | LeaseKey, text: string): Lease {
  const k = typeof key === 'string' ? { subnet: key } : key;
  const { raw, ...attrs } = parseLeaseAttrs(text);
  const exp = raw['Expiration'];
  const ms = typeof exp === 'string' ? Date.parse(exp) : NaN;
  return { ...k, ...attrs, expiration: Number.isNaN(ms) ? 0 : ms };
}

/** Path of the file holding the lease of `subnet` (and `ipv6Subnet` on a dual-stack lease). */
export function leasePath(dir: string, subnet: string, ipv6Subnet?: string): string {
  return join(dir, formatSubnetKey(subnet, ipv6Subnet));
}

// Temp files are dot-named siblings: parseLeaseKey never mistakes them for leases.
const TEMP = { mode: 0o644, hidden: true } as const;

/** Creates the lease file only if none exists: link(2) of a complete temp file fails with EEXIST otherwise. */
export function createLeaseFile(dir: string, lease: Lease): void {
  const path = leasePath(dir, lease.subnet, lease.ipv6Subnet);
  const tmp = writeTempFileSync(path, formatLeaseFile(lease), TEMP);
  try {
    linkSync(tmp, path);
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** Replaces (or creates) the lease file atomically with rename(2); callers hold the directory lock. */
export function replaceLeaseFile(dir: string, lease: Lease): void {
  writeFileAtomicSync(leasePath(dir, lease.subnet, lease.ipv6Subnet), formatLeaseFile(lease), TEMP);
}

/** Deletes the lease file; a missing file is success. */
export function removeLeaseFile(dir: string, subnet: string, ipv6Subnet?: string): void {
  try {
    unlinkSync(leasePath(dir, subnet, ipv6Subnet));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * A directory stamp younger than this (ms, against the wall clock) is not trusted: the kernel's file
 * times tick coarsely, so an entry renamed in within the same tick as the stamp would leave it equal.
 */
export const DIR_STAMP_SETTLE_MS = 2000;

interface CacheEntry {
  ino: number;
  mtimeMs: number;
  size: number;
  lease: Lease | null;
}

/** Reads every lease file of a directory, re-reading only files whose inode, size or mtime changed. */
export class LeaseDirReader {
  private readonly cache = new Map<string, CacheEntry>();
  constructor(private readonly dir: string, private readonly onBadFile: (name: string, err: unknown) => void = () => undefined) {}

  /**
   * The directory's inode, mtime and ctime as one string: equal stamps mean no entry was created,
   * removed or renamed in between (both times move with every such change, and lease files are only
   * ever renamed or linked in, never rewritten in place). One stat instead of one per lease file.
   * undefined while the times are younger than DIR_STAMP_SETTLE_MS: the kernel's file times tick
   * coarsely, so a change made within the stamp's own tick would leave it equal.
   */
  dirStamp(now = Date.now()): string | undefined {
    const st = statSync(this.dir, { bigint: true });
    const settled = now - DIR_STAMP_SETTLE_MS;
    if (Number(st.mtimeMs) > settled || Number(st.ctimeMs) > settled) return undefined;
    return `${st.ino}:${st.mtimeNs}:${st.ctimeNs}`;
  }

  /** All leases on disk, expired ones included, keyed by leaseKey (the IPv4 subnet; the IPv6 one when IPv6-only). */
  readAll(): Map<string, Lease> {
    const out = new Map<string, Lease>();
    const names = this.names();
    for (const name of names) {
      const lease = this.readName(name);
      if (lease) out.set(leaseKey(lease), lease);
    }
    this.forgetExcept(new Set(names));
    return out;
  }

  /** The lease file names in the directory now (temp files and foreign names skipped). */
  names(): string[] {
    return readdirSync(this.dir).filter((name) => parseLeaseKey(name) !== null);
  }

  /** Every entry name of the directory, read off the event loop (by libuv's thread pool); readName skips the ones that are no lease. */
  listNames(): Promise<string[]> {
    return readdir(this.dir);
  }

  /** One lease file's lease, null when it is gone, unreadable or not a lease file name. */
  readName(name: string): Lease | null {
    const key = parseLeaseKey(name);
    return key === null ? null : this.readOne(name, key);
  }

  /** Drops the cached stat of every file not in `names` (the files a full scan found). */
  forgetExcept(names: ReadonlySet<string>): void {
    for (const name of this.cache.keys()) if (!names.has(name)) this.cache.delete(name);
  }

  /**
   * The leases of the named files only (names fs.watch reported), by subnet; null for a name whose
   * file is gone or unreadable (the caller re-scans then). Names that are not lease files are skipped.
   */
  readNames(names: Iterable<string>): Map<string, Lease | null> {
    const out = new Map<string, Lease | null>();
    for (const name of names) {
      const key = parseLeaseKey(name);
      if (key === null) continue;
      const lease = this.readOne(name, key);
      if (lease === null) this.cache.delete(name);
      out.set(key.subnet, lease);
    }
    return out;
  }

  private readOne(name: string, key: LeaseKey): Lease | null {
    const path = join(this.dir, name);
    try {
      const st = statSync(path);
      const hit = this.cache.get(name);
      if (hit && hit.ino === st.ino && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit.lease && { ...hit.lease };
      let lease: Lease | null = null;
      try {
        lease = parseLeaseFile(key, readFileSync(path, 'utf8'));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw err;
        this.onBadFile(name, err);
      }
      this.cache.set(name, { ino: st.ino, mtimeMs: st.mtimeMs, size: st.size, lease });
      return lease && { ...lease };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null; // deleted between readdir and stat
      throw err;
    }
  }
}

// On-disk form of the file store: DIR/<10.244.3.0-24> holds flannel's lease JSON plus
// "Expiration" (RFC 3339). Files are only ever replaced whole (temp + rename) or created
// exclusively (temp + link), so a reader never sees a half-written lease.
import { linkSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync, writeTempFileSync } from '../../lib/fs/atomic-write.ts';
import { formatLeaseAttrs, formatSubnetKey, parseLeaseAttrs, parseSubnetKey } from './lease-json.ts';
import type { Lease } from './store.ts';

/** Renders a lease file: flannel's lease JSON with an added "Expiration". */
export function formatLeaseFile(lease: Lease): string {
  return `${formatLeaseAttrs(lease, { Expiration: new Date(lease.expiration).toISOString() })}\n`;
}

/** Parses a lease file for `subnet`; throws on anything malformed (a missing Expiration counts as expired). */
export function parseLeaseFile(subnet: string, text: string): Lease {
  const attrs = parseLeaseAttrs(text);
  const exp = attrs.raw['Expiration'];
  const ms = typeof exp === 'string' ? Date.parse(exp) : NaN;
  return { subnet, publicIp: attrs.publicIp, backendType: attrs.backendType, backendData: attrs.backendData, expiration: Number.isNaN(ms) ? 0 : ms };
}

/** Path of the file holding `subnet`'s lease. */
export function leasePath(dir: string, subnet: string): string {
  return join(dir, formatSubnetKey(subnet));
}

// Temp files are dot-named siblings: parseSubnetKey never mistakes them for leases.
const TEMP = { mode: 0o644, hidden: true } as const;

/** Creates the lease file only if none exists: link(2) of a complete temp file fails with EEXIST otherwise. */
export function createLeaseFile(dir: string, lease: Lease): void {
  const path = leasePath(dir, lease.subnet);
  const tmp = writeTempFileSync(path, formatLeaseFile(lease), TEMP);
  try {
    linkSync(tmp, path);
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** Replaces (or creates) the lease file atomically with rename(2); callers hold the directory lock. */
export function replaceLeaseFile(dir: string, lease: Lease): void {
  writeFileAtomicSync(leasePath(dir, lease.subnet), formatLeaseFile(lease), TEMP);
}

/** Deletes the lease file; a missing file is success. */
export function removeLeaseFile(dir: string, subnet: string): void {
  try {
    unlinkSync(leasePath(dir, subnet));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

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

  /** All leases on disk, expired ones included, keyed by subnet. */
  readAll(): Map<string, Lease> {
    const out = new Map<string, Lease>();
    const seen = new Set<string>();
    for (const name of readdirSync(this.dir)) {
      const subnet = parseSubnetKey(name);
      if (subnet === null) continue;
      seen.add(name);
      const lease = this.readOne(name, subnet);
      if (lease) out.set(subnet, lease);
    }
    for (const name of this.cache.keys()) if (!seen.has(name)) this.cache.delete(name);
    return out;
  }

  private readOne(name: string, subnet: string): Lease | null {
    const path = join(this.dir, name);
    try {
      const st = statSync(path);
      const hit = this.cache.get(name);
      if (hit && hit.ino === st.ino && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit.lease && { ...hit.lease };
      let lease: Lease | null = null;
      try {
        lease = parseLeaseFile(subnet, readFileSync(path, 'utf8'));
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

// Which files of weft's private run directory (/run/weft, RAM) belong to builds no longer in use:
// V8 code caches of other builds of a bundle and unpacked addons of other builds. Pure planners over
// a directory listing (name + mtime) and the best-effort removal that runs them. Removing a file
// still in use only costs a recompile or a re-extraction (a loaded addon stays mapped), so the
// rules only have to bound the directory, not to be exact: keep this build, the newest other build
// (an upgrade in progress runs two builds at once, which must not evict each other at every call),
// and anything touched within the last hour. Runs in any netns.
import { lstatSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

/** A directory entry: name and modification time. */
export interface CacheEntry {
  name: string;
  mtimeMs: number;
}

/** Files of other builds younger than this are kept whatever their rank. */
export const KEEP_RECENT_MS = 60 * 60 * 1000;

const CC = /^weft-cc-([a-z0-9][a-z0-9-]*)-([0-9a-f]{16})-(v[0-9][0-9.]*)-([a-z0-9_]+)-([A-Z]+|other)\.bin(\.seen)?$/;

/** A code cache's name taken apart (cacheFileName's layout); null for any other name. */
export function parseCacheName(name: string): { bundle: string; body: string; node: string } | null {
  const m = CC.exec(name);
  return m === null ? null : { bundle: m[1] as string, body: m[2] as string, node: m[3] as string };
}

/** Keeps the newest `keep` builds (by their newest file) and the recent ones; returns the names of the rest. */
function pruneBuilds(byBuild: Map<string, CacheEntry[]>, keep: number, now: number): string[] {
  const builds = [...byBuild.values()].map((files) => ({ files, newest: Math.max(...files.map((f) => f.mtimeMs)) }));
  builds.sort((a, b) => b.newest - a.newest);
  return builds.slice(keep).filter((b) => b.newest < now - KEEP_RECENT_MS).flatMap((b) => b.files.map((f) => f.name));
}

/**
 * The code caches to remove when build `bodySha256` of `bundle` runs under `nodeVersion`: those of
 * this bundle (exactly: flannel's never touch flannel-udp's) from other builds or Node versions,
 * all but the newest other build once older than KEEP_RECENT_MS (pure).
 */
export function staleCodeCaches(entries: readonly CacheEntry[], bundle: string, bodySha256: string, nodeVersion: string, now: number): string[] {
  const byBuild = new Map<string, CacheEntry[]>();
  for (const e of entries) {
    const p = parseCacheName(e.name);
    if (p === null || p.bundle !== bundle || (p.body === bodySha256.slice(0, 16) && p.node === nodeVersion)) continue;
    const key = `${p.body}-${p.node}`;
    byBuild.set(key, [...(byBuild.get(key) ?? []), e]);
  }
  return pruneBuilds(byBuild, 1, now);
}

const ADDON = /^weft_sys-([0-9a-f]{16})\.node$/;

/**
 * The unpacked addons to remove once `current` (addonFileName) is written: every build embeds one
 * of two flavours (lean, full), so the three newest others (this build's other flavour and the
 * previous build's two) stay, and anything younger than KEEP_RECENT_MS (pure).
 */
export function staleAddons(entries: readonly CacheEntry[], current: string, now: number): string[] {
  const byBuild = new Map<string, CacheEntry[]>();
  for (const e of entries) if (ADDON.test(e.name) && e.name !== current) byBuild.set(e.name, [e]);
  return pruneBuilds(byBuild, 3, now);
}

/** The directory's entries with their mtimes (entries that vanish meanwhile are skipped). */
export function listEntries(dir: string): CacheEntry[] {
  const out: CacheEntry[] = [];
  for (const name of readdirSync(dir)) {
    try {
      out.push({ name, mtimeMs: lstatSync(join(dir, name)).mtimeMs });
    } catch {
      // removed by a concurrent run
    }
  }
  return out;
}

/** Removes `names` from `dir`, best effort (another run may have removed them already). */
export function removeAll(dir: string, names: readonly string[]): void {
  for (const n of names) {
    try {
      unlinkSync(join(dir, n));
    } catch {
      // already gone
    }
  }
}
